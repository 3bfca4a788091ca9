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
        let script = DescribeCommandTests.repository.appendingPathComponent("scripts/install-deps.sh").path
        let run = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "PATH='\(bin.path)':$PATH bash '\(script)' \(arguments)"],
            input: .null)
        XCTAssertEqual(run.communicate(timeout: 30).termination, .exited(0))
        return (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }

    func testMakeRunInstallsOnlyWhatBuildingNeeds() throws {
        let build = try requested("build")
        assertContains(build, "install -y -qq libyaml-dev libxml2-dev libsqlite3-dev libnats-dev pkg-config\n")
        for testOnly in ["chromium", "nats-server", "tmux", "sqlite3 "] {
            XCTAssertFalse(build.contains(testOnly), build)
        }
        let all = try requested("")
        for package in ["libyaml-dev", "chromium-driver", "nats-server", "tmux", "sqlite3", "curl", "jq"] {
            XCTAssertTrue(all.contains(package), all)
        }
        let makefile = try String(
            contentsOf: DescribeCommandTests.repository.appendingPathComponent("Makefile"), encoding: .utf8)
        XCTAssertTrue(makefile.contains("run: build-deps\n"), "make run asks for the build packages only")
    }
}
