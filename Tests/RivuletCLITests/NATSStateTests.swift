import Components
import Foundation
import XCTest

/// A durable source under `--state`: a message is acknowledged only once its effect is durable —
/// written by the sink, or held by an operator whose state a committed checkpoint keeps — read
/// from the server's own count of unacknowledged messages, with runners killed by SIGKILL.
final class NATSStateTests: NATSTestCase {
    private var server: NATSServer!
    private var monitorPort = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        monitorPort = HTTPServerSourceTests.freePort()
        server = try NATSServer(arguments: [
            "-js", "-a", "127.0.0.1", "-p", "-1", "-m", "\(monitorPort)",
            "-sd", directory.appendingPathComponent("js").path,
        ])
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    override var natsURL: String { server.url }

    /// The consumer's numbers as the server's monitoring endpoint reports them.
    private func consumerInfo(_ durable: String) -> (ackPending: Int, pending: Int)? {
        guard
            let curl = try? ChildProcess(
                executable: "curl",
                arguments: ["-s", "http://127.0.0.1:\(monitorPort)/jsz?accounts=true&streams=true&consumers=true"],
                input: .null, output: .pipe, error: .null),
            let json = try? JSONSerialization.jsonObject(with: Data(curl.communicate(timeout: 10).standardOutput))
                as? [String: Any]
        else { return nil }
        for account in json["account_details"] as? [[String: Any]] ?? [] {
            for stream in account["stream_detail"] as? [[String: Any]] ?? [] {
                let consumers = stream["consumer_detail"] as? [[String: Any]] ?? []
                for consumer in consumers where consumer["name"] as? String == durable {
                    return (consumer["num_ack_pending"] as? Int ?? -1, consumer["num_pending"] as? Int ?? -1)
                }
            }
        }
        return nil
    }

    /// Waits (20 s at most) until the consumer's numbers satisfy `condition`.
    @discardableResult
    private func waitForConsumer(_ durable: String, _ condition: ((ackPending: Int, pending: Int)) -> Bool) -> (
        ackPending: Int, pending: Int
    )? {
        let deadline = Date(timeIntervalSinceNow: 20)
        var info = consumerInfo(durable)
        while !(info.map(condition) ?? false), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            info = consumerInfo(durable)
        }
        return info
    }

    /// Every id written to `name`, however many a line holds.
    private func allIDs(_ name: String) -> [Int] {
        lines(name).flatMap { line in
            line.components(separatedBy: "\"id\":").dropFirst().compactMap { Int($0.prefix(while: \.isNumber)) }
        }
    }

    /// Starts a runner of `pipeline` (always the same file: checkpoints belong to a pipeline by its path).
    private func startRunner(_ pipeline: String, state: String, every interval: String) throws -> ChildProcess {
        let file = path("runner.yaml")
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        return try startRivulet(
            ["run", file, "--state", path(state), "--checkpoint-interval", interval], output: .null, error: .pipe)
    }

    func testABufferedMessageIsAcknowledgedOnlyOnceWrittenOrCheckpointedAndSurvivesSIGKILL() throws {
        try writeOrders(1...3)
        let pipeline = """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: held, create: true, ackWait: 1s } }
            ops:
              - buffer: { timeSpan: 6s, count: 5 }
            sink: { file: \(path("out.jsonl")) }
            """
        // No checkpoint yet: the three wait in the buffer, unacknowledged, and the file is empty.
        let first = try startRunner(pipeline, state: "state.db", every: "1h")
        waitForStderr(first, containing: "nats: reading ORDERS/held")
        XCTAssertEqual(try publish().status, 0)
        let held = waitForConsumer("held") { $0.ackPending == 3 }
        XCTAssertEqual(held?.ackPending, 3, "delivered and held, not acknowledged")
        XCTAssertEqual(lines("out.jsonl"), [])
        _ = stop(first, SIGKILL)

        // Redelivered after ackWait; a checkpoint keeps them in the buffer's state and acknowledges
        // them while the window (and so the file) is still open.
        let second = try startRunner(pipeline, state: "state.db", every: "200ms")
        let acknowledged = waitForConsumer("held") { $0.ackPending == 0 && $0.pending == 0 }
        XCTAssertEqual(acknowledged?.ackPending, 0, "acknowledged once a checkpoint holds them")
        XCTAssertEqual(lines("out.jsonl"), [], "the window has not ended")
        _ = stop(second, SIGKILL)

        // The buffer comes back from the checkpoint and ends its window: each written once, none
        // delivered again.
        let third = try startRunner(pipeline, state: "state.db", every: "200ms")
        waitForLines("out.jsonl", atLeast: 1)
        Thread.sleep(forTimeInterval: 1.5)  // ackWait passes: a redelivery would show now
        let (status, stderr) = stop(third, SIGINT)
        XCTAssertEqual(status, 130, stderr)
        XCTAssertEqual(allIDs("out.jsonl").sorted(), [1, 2, 3], lines("out.jsonl").joined(separator: "\n"))
        XCTAssertEqual(consumerInfo("held")?.ackPending, 0)
    }

    func testAReduceOverMoreMessagesThanMaxAckPendingDoesNotStallUnderState() throws {
        try writeOrders(1...5000)
        let pipeline = """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: total, create: true, maxAckPending: 1000 } }
            ops:
              - reduce: { seed: 0, accumulator: acc + 1 }
            sink: { file: \(path("total.jsonl")) }
            """
        let runner = try startRunner(pipeline, state: "state.db", every: "100ms")
        waitForStderr(runner, containing: "nats: reading ORDERS/total")
        XCTAssertEqual(try publish().status, 0)
        // Each checkpoint acknowledges what the total holds, so the consumer is never stuck at 1,000.
        let drained = waitForConsumer("total") { $0.ackPending == 0 && $0.pending == 0 }
        XCTAssertEqual(drained?.pending, 0, "every message delivered")
        XCTAssertEqual(drained?.ackPending, 0, "every message acknowledged")
        let (status, stderr) = stop(runner, SIGINT)
        XCTAssertEqual(status, 130, stderr)
        XCTAssertEqual(lines("total.jsonl"), ["5000"], stderr)
    }
}
