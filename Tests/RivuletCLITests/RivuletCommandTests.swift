import Foundation
import XCTest

/// Runs the built `rivulet` binary and checks its output and exit code.
final class RivuletCommandTests: XCTestCase {
    func testVersionPrintsTheVersion() throws {
        let result = try runRivulet(["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "0.1.0")
    }

    func testHelpDescribesTheTool() throws {
        let result = try runRivulet(["--help"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.contains("USAGE: rivulet"), result.stdout)
        XCTAssertTrue(result.stdout.contains("RxSwift"), result.stdout)
    }

    func testUnknownOptionExitsWithUsageError() throws {
        let result = try runRivulet(["--no-such-option"])
        XCTAssertEqual(result.status, 2, "an invalid command line exits with 2")
        XCTAssertTrue(result.stderr.contains("Unknown option '--no-such-option'"), result.stderr)
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

/// Runs `rivulet` with `arguments` and waits for it to end.
func runRivulet(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = productsDirectory().appendingPathComponent("rivulet")
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = Pipe()
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
    let stderrData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        stdout: String(decoding: stdoutData, as: UTF8.self),
        stderr: String(decoding: stderrData, as: UTF8.self))
}
