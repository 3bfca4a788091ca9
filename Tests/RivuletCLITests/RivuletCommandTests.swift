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

    /// ArgumentParser adds "(default: X)" to an option's help by itself: a help text that says it
    /// too shows it twice. Every command's help, subcommands' included, states each default once.
    func testEveryCommandsHelpStatesADefaultOnce() throws {
        var commands: [[String]] = [[]]
        var index = 0
        while index < commands.count {
            let command = commands[index]
            index += 1
            let result = try runRivulet(command + ["--help"])
            XCTAssertEqual(result.status, 0, "\(command) --help: \(result.stderr)")
            let help = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if let twice = help.firstMatch(of: /\(default: ([^)]*)\)\.? \(default: \1\)/) {
                XCTFail("rivulet \(command.joined(separator: " ")) --help states a default twice: \(twice.output.0)")
            }
            // The subcommands it lists: a name two spaces in, up to the block's first empty line.
            guard let listed = result.stdout.components(separatedBy: "SUBCOMMANDS:\n").dropFirst().first else {
                continue
            }
            let block = listed.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
            for line in block where line.hasPrefix("  ") && !line.hasPrefix("   ") {
                guard let name = line.split(separator: " ").first, name != "help" else { continue }
                commands.append(command + [String(name)])
            }
        }
        XCTAssertGreaterThan(commands.count, 15, "the subcommands were found: \(commands)")
    }

    func testUnknownOptionExitsWithUsageError() throws {
        let result = try runRivulet(["--no-such-option"])
        XCTAssertEqual(result.status, 2, "an invalid command line exits with 2")
        assertContains(result.stderr, "Unknown option '--no-such-option'")
        XCTAssertFalse(result.stderr.contains("Fatal error"), result.stderr)
    }
}
