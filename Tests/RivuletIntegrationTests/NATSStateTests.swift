import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// A durable source under `--state`: a message is acknowledged only once its effect is durable —
/// written by the sink, or held by an operator whose state a committed checkpoint keeps — read
/// from the server's own count of unacknowledged messages, with runners killed by SIGKILL.
final class NATSStateTests: NATSTestCase {
    private var server: NATSServer!
    private var monitorPort = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        monitorPort = freeLoopbackPort()
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

    /// A runner of `pipeline` (always the same file: checkpoints belong to a pipeline by its path)
    /// under --state; with `draining`, a signal ends its sources and writes
    /// what operators hold (`--drain`) rather than keeping it in the checkpoint.
    private func startRunner(_ pipeline: String, state: String, every interval: String, draining: Bool = false) throws
        -> ChildProcess
    {
        let file = path("runner.yaml")
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        return try startRivulet(
            ["run", file, "--state", path(state), "--checkpoint-interval", interval] + (draining ? ["--drain"] : []),
            output: .null, error: .pipe)
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

    /// Exactly once into a `file` sink: a message whose effect a checkpoint holds is acknowledged
    /// after the commit, and one delivered again because its acknowledgement was lost with the
    /// runner is recognised by its stream sequence in the checkpoint and not processed twice.
    func testStatefulOperatorsKilledAtRandomWriteEachMessageExactlyOnce() throws {
        try writeOrders(1...3000)
        let operators = [
            "buffer": "- buffer: { count: 10, timeSpan: 1h }",
            "aggregate": "- aggregate: { by: .qty, every: 1h, fields: { n: count, ids: { sum: .id } } }",
            "window": "- window: { count: 10 }",
            "groupBy": "- groupBy: { key: .qty, ops: [{ buffer: { count: 5, timeSpan: 1h } }] }",
            "dedupe": "- dedupe: { key: .id }",
            "delay": "- delay: 300ms",
            "session": "- window: { sessionGap: 1h, count: 25 }",
            // After a source whose messages are acknowledged, partitions run on the pipeline's thread.
            "partitionBy":
                "- partitionBy: { key: .qty, partitions: 4, threads: 2, ops: [ { aggregate: { by: .qty, every: 1h, "
                + "fields: { n: count, ids: { sum: .id } } } } ] }",
        ]
        var generator = SystemRandomNumberGenerator()
        func pipelineFile(_ name: String) -> String { path("\(name).yaml") }
        func start(_ name: String, draining: Bool = false) throws -> ChildProcess {
            try startRivulet(
                ["run", pipelineFile(name), "--state", path("\(name).db"), "--checkpoint-interval", "50ms"]
                    + (draining ? ["--drain"] : []), output: .null, error: .pipe)
        }
        // Each pipeline's consumer exists before the stream is filled: each reads all 3,000.
        for (name, step) in operators {
            try """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: \(name), create: true, ackWait: 1s } }
            ops:
              \(step)
            sink: { file: { path: \(path("killed-\(name).jsonl")), mode: append } }
            """.write(toFile: pipelineFile(name), atomically: true, encoding: .utf8)
            let setup = try start(name)
            // "reading" is said before the consumer exists: wait for the server to know it.
            XCTAssertNotNil(waitForConsumer(name) { _ in true }, "\(name): the consumer was created")
            _ = stop(setup, SIGKILL)
        }
        let published = try publish()
        XCTAssertEqual(published.status, 0, published.stderr)
        for name in operators.keys.sorted() {
            let output = "killed-\(name).jsonl"
            let first = try start(name)
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...0.4, using: &generator))
            _ = stop(first, SIGKILL)
            for _ in 0..<4 {
                let runner = try start(name)
                Thread.sleep(forTimeInterval: Double.random(in: 0.2...0.8, using: &generator))
                _ = stop(runner, SIGKILL)
            }
            // The last one is stopped as a drain: its open windows are written.
            let last = try start(name, draining: true)
            // Signalled before its pipeline starts, a runner ends doing nothing: let it start.
            waitForStderr(last, containing: "nats: reading ORDERS/\(name)")
            let drained = waitForConsumer(name) { $0.ackPending == 0 && $0.pending == 0 }
            XCTAssertEqual(drained?.pending, 0, "\(name): every message delivered")
            let (status, stderr) = stop(last, SIGINT)
            XCTAssertEqual(status, 130, stderr)
            if name != "aggregate" && name != "partitionBy" {
                let ids = allIDs(output)
                let twice = Dictionary(grouping: ids, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
                XCTAssertEqual(Set(1...3000).subtracting(ids).sorted(), [], "\(name): every message written")
                XCTAssertEqual(twice, [], "\(name): no message written twice")
                print("nats -> \(name), killed 5 times: 3000 messages, \(ids.count - 3000) written twice")
            } else {
                // Per key (qty 0...6): the counts and the sums of ids cover every message exactly once.
                var counts: [Int: Int] = [:]
                var sums: [Int: Int] = [:]
                for line in lines(output) {
                    guard let row = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                        let key = row["key"] as? Int, let n = row["n"] as? Int, let ids = row["ids"] as? Int
                    else { continue }
                    counts[key, default: 0] += n
                    sums[key, default: 0] += ids
                }
                for key in 0..<7 {
                    let truth = (1...3000).filter { $0 % 7 == key }
                    XCTAssertEqual(counts[key] ?? 0, truth.count, "\(name): key \(key) counted exactly once")
                    XCTAssertEqual(sums[key] ?? 0, truth.reduce(0, +), "\(name): key \(key) summed exactly once")
                }
                print(
                    "nats -> \(name), killed 5 times: 3000 messages, \(counts.values.reduce(0, +) - 3000) counted twice"
                )
            }
        }
    }

    func testAReduceOverMoreMessagesThanMaxAckPendingDoesNotStallUnderState() throws {
        try writeOrders(1...5000)
        let pipeline = """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: total, create: true, maxAckPending: 1000 } }
            ops:
              - reduce: { seed: 0, accumulator: acc + 1 }
            sink: { file: \(path("total.jsonl")) }
            """
        let runner = try startRunner(pipeline, state: "state.db", every: "100ms", draining: true)
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
