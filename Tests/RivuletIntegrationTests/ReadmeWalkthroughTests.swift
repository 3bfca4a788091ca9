import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// The README's walkthroughs, run as written in a scratch copy of the repository's layout (on a
/// free port instead of the one the README shows): each command's output must be the `# ` lines
/// that follow it.
final class ReadmeWalkthroughTests: BinaryTestCase {
    /// The lines of the README's `bash` block under `heading`.
    static func walkthrough(under heading: String) throws -> [String] {
        let readme = try String(
            contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let found = readme.range(of: heading),
            let start = readme.range(of: "```bash\n", range: found.upperBound..<readme.endIndex),
            let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex)
        else { return [] }
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    /// Runs the walkthrough under `heading` with `pipeline` copied into Pipelines/ and the
    /// README's `:port` replaced by `:free`; checks its output against the `# ` lines and returns
    /// its standard error.
    private func runWalkthrough(
        under heading: String, pipeline: String, port: String, free: Int, environment: [String: String]
    ) throws -> String {
        let lines = try Self.walkthrough(under: heading)
        XCTAssertGreaterThan(lines.count, 4, "the walkthrough was found")
        let expected = lines.filter { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
        // Each command's output on a line of its own, as the comments show it.
        let script = lines.filter { !$0.hasPrefix("# ") }.map { line in
            line.replacingOccurrences(of: ":\(port)", with: ":\(free)")
                .replacingOccurrences(of: "-p \(port)", with: "-p \(free)") + (line.hasPrefix("curl") ? "; echo" : "")
        }.joined(separator: "\n")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("Pipelines"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Repository.root.appendingPathComponent("Pipelines/\(pipeline)"),
            to: directory.appendingPathComponent("Pipelines/\(pipeline)"))
        try FileManager.default.createSymbolicLink(
            at: directory.appendingPathComponent(".build"),
            withDestinationURL: Repository.root.appendingPathComponent(".build"))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = ["-c", "set -m\n" + script]
        shell.currentDirectoryURL = directory
        shell.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        shell.standardOutput = output
        shell.standardError = errors
        try shell.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(stdout.split(separator: "\n").map(String.init), expected, stderr)
        return stderr
    }

    func testTheWebhookWalkthroughPrintsWhatItShows() throws {
        let port = freeLoopbackPort()
        let stderr = try runWalkthrough(
            under: "## Webhooks into SQLite", pipeline: "webhook-to-sqlite.yaml", port: "8080", free: port,
            environment: ["WEBHOOK_ADDRESS": "127.0.0.1:\(port)"])
        assertContains(stderr, "httpServer: listening on http://127.0.0.1:\(port) (/orders)")
        let rejected = try String(
            contentsOf: directory.appendingPathComponent("Pipelines/rejected.jsonl"), encoding: .utf8)
        assertContains(rejected, "\"order\":{\"id\":3,\"customer\":\"cy\",\"qty\":\"two\",\"price\":1}")
    }

    func testTheNATSWalkthroughPrintsWhatItShows() throws {
        let port = freeLoopbackPort()
        let stderr = try runWalkthrough(
            under: "## Durable streams on NATS JetStream", pipeline: "nats-orders.yaml", port: "4222", free: port,
            environment: ["NATS_URL": "nats://127.0.0.1:\(port)"])
        assertContains(stderr, "nats: reading ORDERS/invoicer on nats://127.0.0.1:\(port)")
        // The invoice reached the INVOICES stream (read back above), and no publish failed.
        XCTAssertFalse(stderr.contains("error:"), stderr)
        XCTAssertFalse(stderr.contains("failed"), stderr)
    }
}
