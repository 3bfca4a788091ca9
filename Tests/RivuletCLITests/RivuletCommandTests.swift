import BinaryTestSupport
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
            arguments: ["-C", Repository.root.path, "rev-parse", "--short=12", "HEAD"])
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
