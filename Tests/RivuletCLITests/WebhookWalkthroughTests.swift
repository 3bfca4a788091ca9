import Foundation
import XCTest

/// The README's webhook walkthrough, run as written (on a free port instead of 8080, given to the pipeline as WEBHOOK_ADDRESS): each
/// command's output must be the `# ` lines that follow it.
final class WebhookWalkthroughTests: BinaryTestCase {
    /// The lines of the README's `bash` block under "Webhooks into SQLite".
    static func walkthrough() throws -> [String] {
        let readme = try String(
            contentsOf: DescribeCommandTests.repository.appendingPathComponent("README.md"), encoding: .utf8)
        guard let heading = readme.range(of: "## Webhooks into SQLite"),
            let start = readme.range(of: "```bash\n", range: heading.upperBound..<readme.endIndex),
            let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex)
        else { return [] }
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    func testTheWalkthroughOfTheReadmePrintsWhatItShows() throws {
        let lines = try Self.walkthrough()
        XCTAssertGreaterThan(lines.count, 8, "the walkthrough was found")
        let expected = lines.filter { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
        let port = HTTPServerSourceTests.freePort()
        // Each command's output on a line of its own, as the comments show it.
        let script = lines.filter { !$0.hasPrefix("# ") }.map { line in
            line.replacingOccurrences(of: ":8080", with: ":\(port)") + (line.hasPrefix("curl") ? "; echo" : "")
        }.joined(separator: "\n")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("Pipelines"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: DescribeCommandTests.repository.appendingPathComponent("Pipelines/webhook-to-sqlite.yaml"),
            to: directory.appendingPathComponent("Pipelines/webhook-to-sqlite.yaml"))
        try FileManager.default.createSymbolicLink(
            at: directory.appendingPathComponent(".build"),
            withDestinationURL: DescribeCommandTests.repository.appendingPathComponent(".build"))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = ["-c", "set -m\n" + script]
        shell.currentDirectoryURL = directory
        shell.environment = ProcessInfo.processInfo.environment.merging(
            ["WEBHOOK_ADDRESS": "127.0.0.1:\(port)"]) { $1 }
        let output = Pipe()
        let errors = Pipe()
        shell.standardOutput = output
        shell.standardError = errors
        try shell.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(stdout.split(separator: "\n").map(String.init), expected, stderr)
        XCTAssertTrue(stderr.contains("httpServer: listening on http://127.0.0.1:\(port) (/orders)"), stderr)
        let rejected = try String(
            contentsOf: directory.appendingPathComponent("Pipelines/rejected.jsonl"), encoding: .utf8)
        XCTAssertTrue(
            rejected.contains("\"order\":{\"id\":3,\"customer\":\"cy\",\"qty\":\"two\",\"price\":1}"), rejected)
    }
}
