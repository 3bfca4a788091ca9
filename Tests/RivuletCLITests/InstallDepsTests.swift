import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// scripts/install-deps.sh: `make run` installs what building and running need, `make test` also
/// the test-only packages (a browser, a NATS server). Run with a `dpkg` that finds nothing and an
/// `apt-get` that records what it is asked for.
final class InstallDepsTests: BinaryTestCase {
    private func requested(_ arguments: String) throws -> String {
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("apt.log").path
        let fakes = [
            "dpkg": "#!/bin/sh\nexit 1\n", "apt-get": "#!/bin/sh\necho \"$@\" >> '\(log)'\n",
            "sudo": "#!/bin/sh\nexec \"$@\"\n",
        ]
        for (name, text) in fakes {
            let path = bin.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
        }
        try? FileManager.default.removeItem(atPath: log)
        let script = Repository.root.appendingPathComponent("scripts/install-deps.sh").path
        let run = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "PATH='\(bin.path)':$PATH bash '\(script)' \(arguments)"],
            input: .null)
        XCTAssertEqual(run.communicate(timeout: 30).termination, .exited(0))
        return (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }

    func testMakeRunInstallsOnlyWhatBuildingNeeds() throws {
        let build = try requested("build")
        assertContains(
            build, "install -y -qq libyaml-dev libxml2-dev libsqlite3-dev libnats-dev libpq-dev pkg-config\n")
        for testOnly in ["chromium", "nats-server", "postgresql", "tmux", "sqlite3 "] {
            XCTAssertFalse(build.contains(testOnly), build)
        }
        let all = try requested("")
        for package in [
            "libyaml-dev", "libpq-dev", "chromium-driver", "nats-server", "postgresql", "tmux", "sqlite3", "curl", "jq",
        ] {
            XCTAssertTrue(all.contains(package), all)
        }
        // Another apt holding the package manager's lock is waited for, not a failure.
        for call in all.split(separator: "\n") {
            XCTAssertTrue(call.hasPrefix("-o DPkg::Lock::Timeout=600 "), String(call))
        }
        let makefile = try String(
            contentsOf: Repository.root.appendingPathComponent("Makefile"), encoding: .utf8)
        XCTAssertTrue(makefile.contains("run: build-deps\n"), "make run asks for the build packages only")
        XCTAssertTrue(
            makefile.contains("scripts/quiet-build.sh .build/make-run.log swift build --product rivulet"),
            "make run's build prints a summary")
    }

    /// `make run`'s build (scripts/quiet-build.sh): thousands of lines go to a log and one line of
    /// summary to the screen; a failed build shows its errors and last lines, and its exit status.
    func testABuildPrintsASummaryAndAFailedOneItsErrors() throws {
        let script = Repository.root.appendingPathComponent("scripts/quiet-build.sh").path
        let log = directory.appendingPathComponent("build.log").path
        func build(_ command: String) throws -> (status: Int32, output: String) {
            let run = try ChildProcess(
                executable: "/bin/bash", arguments: [script, log, "sh", "-c", command], input: .null)
            let ended = run.communicate(timeout: 60)
            guard case .exited(let status) = ended.termination else { return (-1, "") }
            return (status, String(decoding: ended.standardOutput, as: UTF8.self))
        }
        let built = try build(#"for i in $(seq 3754); do echo "[$i/3754] Compiling x$i.swift"; done"#)
        XCTAssertEqual(built.status, 0)
        XCTAssertEqual(built.output.split(separator: "\n").count, 2, built.output)
        assertContains(built.output, "built in ", ", 3754 steps, 0 warning(s) in the project's own code")
        XCTAssertEqual(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count, 3754)
        let failed = try build(#"echo "[1/2] Compiling a.swift"; echo "a.swift:3:1: error: cannot find 'x'"; exit 1"#)
        XCTAssertEqual(failed.status, 1)
        assertContains(failed.output, "build failed (exit 1)", "a.swift:3:1: error: cannot find 'x'")
    }
}
