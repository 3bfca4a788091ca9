import Components
import Foundation
import RivuletTestSupport
import XCTest

/// Runs the built `rivulet` binary and checks its output and exit code.
final class RivuletCommandTests: XCTestCase {
    func testVersionPrintsTheVersion() throws {
        let result = try runRivulet(["--version"])
        XCTAssertEqual(result.status, 0)
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(line.hasPrefix("0.1.0 (commit "), line)
        // In a checkout, the commit is the one checked out (the build ran after the last commit).
        let git = try ChildProcess(
            executable: "git",
            arguments: ["-C", DescribeCommandTests.repository.path, "rev-parse", "--short=12", "HEAD"])
        let head = git.communicate(timeout: 30)
        if head.termination == .exited(0) {
            let commit = String(decoding: head.standardOutput, as: UTF8.self).trimmingCharacters(
                in: .whitespacesAndNewlines)
            XCTAssertTrue(line.hasPrefix("0.1.0 (commit \(commit)"), "\(line) vs \(commit)")
        }
    }

    func testHelpDescribesTheTool() throws {
        let result = try runRivulet(["--help"])
        XCTAssertEqual(result.status, 0)
        assertContains(result.stdout, "USAGE: rivulet", "RxSwift")
    }

    func testUnknownOptionExitsWithUsageError() throws {
        let result = try runRivulet(["--no-such-option"])
        XCTAssertEqual(result.status, 2, "an invalid command line exits with 2")
        assertContains(result.stderr, "Unknown option '--no-such-option'")
        XCTAssertFalse(result.stderr.contains("Fatal error"), result.stderr)
    }
}

/// What a run of the binary printed and how it ended.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// The directory holding the built products (`rivulet`, the test bundle).
func productsDirectory() -> URL {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.pathComponents.count > 1 {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("rivulet").path) { return url }
    }
    return URL(fileURLWithPath: ".build/debug")
}

/// Starts `rivulet` with `arguments` and variables added to its environment; its standard
/// streams as given. Every run checks for leaks (`RIVULET_LEAK_CHECK=1`: a run or test that
/// ends with a sink or disposable of the runtime still alive exits with 70), unless
/// `environment` sets the variable otherwise.
func startRivulet(
    _ arguments: [String], environment: [String: String] = [:], input: ChildProcess.Stream = .null,
    output: ChildProcess.Stream = .pipe, error: ChildProcess.Stream = .pipe
) throws -> ChildProcess {
    let binary = productsDirectory().appendingPathComponent("rivulet").path
    let environment = environment.merging(["RIVULET_LEAK_CHECK": "1"]) { given, _ in given }
    // env replaces itself with rivulet: the process started is rivulet's, for signals too.
    return try ChildProcess(
        executable: "env",
        arguments: environment.sorted { $0.key < $1.key }.map { "\($0)=\($1)" } + [binary] + arguments,
        input: input, output: output, error: error)
}

/// Runs `rivulet` with `arguments` and waits for it to end; a run that takes longer than
/// `timeout` seconds is killed and fails the test, so a hang can never stall the suite.
func runRivulet(
    _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Double = 120,
    file: StaticString = #filePath, line: UInt = #line
) throws -> ProcessResult {
    let process = try startRivulet(arguments, environment: environment, input: .pipe)
    let output = process.communicate(input: Array((stdin ?? "").utf8), timeout: timeout)
    if output.timedOut {
        XCTFail(
            "rivulet \(arguments.joined(separator: " ")) ran past \(timeout) s and was killed", file: file, line: line)
    }
    return ProcessResult(
        status: output.termination.status,
        stdout: String(decoding: output.standardOutput, as: UTF8.self),
        stderr: String(decoding: output.standardError, as: UTF8.self))
}
