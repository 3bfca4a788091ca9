import Components
import Foundation
import XCTest

/// A `nats-server -js` of the test's own, on 127.0.0.1 at a port it picks, with its store in the
/// test's directory; stopped by `stop()` (and killed with the test process at the latest).
final class NATSServer {
    let process: ChildProcess
    let url: String
    let port: String

    /// Starts a server at `port` (nil: a free one the server picks).
    init(storeDirectory: String, port: String? = nil) throws {
        process = try ChildProcess(
            executable: "nats-server",
            arguments: ["-js", "-a", "127.0.0.1", "-p", port ?? "-1", "-sd", storeDirectory], input: .null,
            output: .null, error: .pipe)
        var log = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date(timeIntervalSinceNow: 10)
        while !log.contains("Server is ready"), Date() < deadline {
            let count = read(process.standardError, &buffer, buffer.count)
            guard count > 0 else { break }
            log += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        guard let range = log.range(of: #"client connections on 127\.0\.0\.1:(\d+)"#, options: .regularExpression),
            let port = log[range].split(separator: ":").last
        else {
            process.send(SIGKILL)
            throw NSError(domain: "nats-server did not start: \(log)", code: 1)
        }
        self.port = String(port)
        url = "nats://127.0.0.1:\(port)"
    }

    func stop() {
        process.send(SIGTERM)
        _ = process.wait()
    }
}

/// The `nats` source and sink against a real nats-server: publish, consume, acknowledge,
/// redelivery after a runner is killed, failed messages to a dead-letter subject, de-duplication
/// by msgId, and the errors a user meets first.
final class NATSTests: BinaryTestCase {
    private var server: NATSServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func writeOrders(_ ids: ClosedRange<Int>) throws {
        let lines = ids.map { "{\"id\":\($0),\"qty\":\($0 % 7),\"price\":2.5}" }.joined(separator: "\n")
        try (lines + "\n").write(toFile: path("orders.jsonl"), atomically: true, encoding: .utf8)
    }

    /// Publishes orders.jsonl to the ORDERS stream (created by a consumer first) with msgId.
    private func publish() throws -> ProcessResult {
        try run(
            """
            source: { fixture: \(path("orders.jsonl")) }
            sink: { nats: { url: "\(server.url)", subject: orders.new, msgId: "{{ .id }}" } }
            """)
    }

    private func consumerPipeline(durable: String, output: String, extra: String = "", ops: String? = nil) -> String {
        """
        source: { nats: { url: "\(server.url)", stream: ORDERS, subject: "orders.>", durable: \(durable), create: true\(extra) } }
        ops:
          \(ops ?? "- filter: .qty > 0\n  - map: { id: .id, total: .qty * .price }")
        sink: { file: \(path(output)) }
        """
    }

    /// Starts a consumer; it runs until signalled.
    private func startConsumer(_ pipeline: String) throws -> ChildProcess {
        let file = path("c-\(UUID().uuidString).yaml")
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        return try startRivulet(["run", file], output: .null, error: .pipe)
    }

    private func lines(_ name: String) -> [String] {
        ((try? String(contentsOfFile: path(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private func ids(_ name: String) -> [Int] {
        lines(name).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
        }
    }

    /// Waits until `name` has at least `count` lines (or 30 s).
    private func waitForLines(_ name: String, atLeast count: Int) {
        let deadline = Date(timeIntervalSinceNow: 30)
        while lines(name).count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }

    private func stop(_ process: ChildProcess, _ signal: Int32 = SIGTERM) -> (Int32, String) {
        process.send(signal)
        let output = process.communicate(input: [], timeout: 60)
        return (output.termination.status, String(decoding: output.standardError, as: UTF8.self))
    }

    func testConsumesAcknowledgesAndDeduplicatesByMessageID() throws {
        try writeOrders(1...500)
        let consumer = try startConsumer(consumerPipeline(durable: "writer", output: "out.jsonl"))
        Thread.sleep(forTimeInterval: 0.5)  // the consumer creates the stream
        let published = try publish()
        XCTAssertEqual(published.status, 0, published.stderr)
        waitForLines("out.jsonl", atLeast: 429)
        let (status, stderr) = stop(consumer)
        XCTAssertEqual(status, 143, stderr)
        let expected = (1...500).filter { $0 % 7 != 0 }
        XCTAssertEqual(ids("out.jsonl"), expected, "filtered, mapped, in order")

        // Everything was acknowledged: a second runner of the same consumer gets nothing, and the
        // same ids published again are dropped by JetStream.
        let republished = try publish()
        XCTAssertEqual(republished.status, 0, republished.stderr)
        let again = try startConsumer(consumerPipeline(durable: "writer", output: "again.jsonl"))
        Thread.sleep(forTimeInterval: 1.5)
        let (againStatus, againErr) = stop(again, SIGINT)
        XCTAssertEqual(againStatus, 130, againErr)
        XCTAssertEqual(lines("again.jsonl"), [], "nothing redelivered, nothing stored twice")
    }

    func testARunnerKilledMidStreamLosesNothing() throws {
        try writeOrders(1...20000)
        let setup = try startConsumer(consumerPipeline(durable: "setup", output: "setup.jsonl"))
        Thread.sleep(forTimeInterval: 0.5)
        _ = stop(setup)
        XCTAssertEqual(try publish().status, 0)
        let pipeline = { (output: String) in
            self.consumerPipeline(
                durable: "shared", output: output, extra: ", ackWait: 1s, batch: 50",
                ops: "- map: { id: .id }\n  - delay: 1ms")
        }
        let first = try startConsumer(pipeline("first.jsonl"))
        waitForLines("first.jsonl", atLeast: 300)
        first.send(SIGKILL)
        XCTAssertEqual(first.wait(), .signalled(SIGKILL))
        let killedAt = Set(ids("first.jsonl"))
        XCTAssertLessThan(killedAt.count, 20000, "killed while busy")

        let second = try startConsumer(pipeline("second.jsonl"))
        let deadline = Date(timeIntervalSinceNow: 90)
        while Set(ids("first.jsonl") + ids("second.jsonl")).count < 20000 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
        }
        let (status, stderr) = stop(second)
        XCTAssertEqual(status, 143, stderr)
        let all = ids("first.jsonl") + ids("second.jsonl")
        XCTAssertEqual(Set(all), Set(1...20000), "every message written at least once")
        print("nats: killed runner: \(all.count - Set(all).count) duplicates of 20000")
    }

    func testAFailingMessageIsRetriedThenDeadLettered() throws {
        try
            "{\"id\":1,\"qty\":2,\"price\":2.5}\n{\"id\":2,\"qty\":3,\"price\":\"free\"}\n{\"id\":3,\"qty\":1,\"price\":1}\n"
            .write(toFile: path("orders.jsonl"), atomically: true, encoding: .utf8)
        let consumer = try startConsumer(
            """
            streams:
              orders:
                source: { nats: { url: "\(server.url)", stream: ORDERS, subject: "orders.>", durable: w, create: true, maxDeliver: 3, nakDelay: 100ms, deadLetter: dead.orders, metadata: _nats } }
                ops:
                  - map: { id: .id, total: .qty * .price, delivered: ._nats.delivered }
                    onError: skip
              dead:
                source: { nats: { url: "\(server.url)", stream: DEAD, subject: "dead.>", durable: d, create: true, metadata: _nats } }
                ops:
                  - map: { id: .id, headers: ._nats.headers }
            sinks:
              - stream: orders
                file: \(path("out.jsonl"))
              - stream: dead
                file: \(path("dead.jsonl"))
            """)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try publish().status, 0)
        waitForLines("dead.jsonl", atLeast: 1)
        let (status, stderr) = stop(consumer)
        XCTAssertEqual(status, 143, stderr)
        XCTAssertEqual(
            lines("out.jsonl"), ["{\"id\":1,\"total\":5.0,\"delivered\":1}", "{\"id\":3,\"total\":1,\"delivered\":1}"])
        let dead = lines("dead.jsonl")
        XCTAssertEqual(dead.count, 1, "dead-lettered once, after its third delivery")
        XCTAssertTrue(dead.first?.contains("\"id\":2") ?? false, dead.joined())
        XCTAssertTrue(dead.first?.contains("free") ?? false, "the error names the value: \(dead.joined())")
    }

    func testAMissingStreamAndAWrongTokenAreClearErrors() throws {
        let missing = try run(
            """
            source: { nats: { url: "\(server.url)", stream: NOPE, durable: w } }
            sink: stdout
            """)
        XCTAssertEqual(missing.status, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("stream 'NOPE' does not exist"), missing.stderr)
        XCTAssertTrue(missing.stderr.contains(":1:"), "located: \(missing.stderr)")

        // A server that wants a token.
        server.stop()
        let config = path("auth.conf")
        try "authorization { token: \"right-token\" }\n".write(toFile: config, atomically: true, encoding: .utf8)
        server = nil
        let guarded = try ChildProcess(
            executable: "nats-server",
            arguments: ["-a", "127.0.0.1", "-p", "-1", "-c", config, "-js", "-sd", path("js2")],
            input: .null, output: .null, error: .pipe)
        defer {
            guarded.send(SIGTERM)
            _ = guarded.wait()
        }
        var log = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !log.contains("Server is ready") {
            let count = read(guarded.standardError, &buffer, buffer.count)
            guard count > 0 else { break }
            log += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        let port = log.range(of: #"127\.0\.0\.1:\d+"#, options: .regularExpression).map { log[$0] } ?? ""
        let wrong = try run(
            """
            source: { nats: { url: "nats://\(port)", stream: ORDERS, durable: w, token: "${NATS_TOKEN}" } }
            sink: stdout
            """, environment: ["NATS_TOKEN": "wrong-secret-token"])
        XCTAssertEqual(wrong.status, 1, wrong.stderr)
        XCTAssertTrue(wrong.stderr.lowercased().contains("authorization"), wrong.stderr)
        XCTAssertFalse(wrong.stderr.contains("wrong-secret-token"), "the token is never printed: \(wrong.stderr)")
    }

    func testAConsumerWithOtherSettingsIsAClearErrorEveryTime() throws {
        let first = try startConsumer(consumerPipeline(durable: "writer", output: "out.jsonl"))
        Thread.sleep(forTimeInterval: 0.5)
        _ = stop(first)
        // Twenty times: the run ends while the client's threads still call back (a crash, once).
        for _ in 0..<20 {
            let other = try run(consumerPipeline(durable: "writer", output: "other.jsonl", extra: ", ackWait: 2s"))
            XCTAssertEqual(other.status, 1, other.stderr)
            XCTAssertTrue(
                other.stderr.contains(
                    "consumer 'writer' on stream 'ORDERS' exists with other settings: ackWait 30000ms (the file: 2000ms)"
                ),
                other.stderr)
        }
    }

    func testCoreNATSQueueGroupMembersShareMessagesAtMostOnceEach() throws {
        let member = { (output: String) in
            """
            source: { nats: { url: "\(self.server.url)", subject: "core.>", durable: workers, format: text, metadata: _nats } }
            ops:
              - map: { text: .value, subject: ._nats.subject }
            sink: { file: \(self.path(output)) }
            """
        }
        let one = try startConsumer(member("one.jsonl"))
        let two = try startConsumer(member("two.jsonl"))
        Thread.sleep(forTimeInterval: 0.7)
        let published = try run(
            """
            source: { events: [\((1...200).map { "{ at: \($0)ms, next: \"m\($0)\" }" }.joined(separator: ", "))] }
            sink: { nats: { url: "\(server.url)", subject: core.orders, jetstream: false } }
            """, ["--clock", "virtual"])
        XCTAssertEqual(published.status, 0, published.stderr)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(stop(one, SIGINT).0, 130)
        XCTAssertEqual(stop(two, SIGINT).0, 130)
        let all = lines("one.jsonl") + lines("two.jsonl")
        XCTAssertEqual(all.count, 200, "each message to one member of the group")
        XCTAssertEqual(Set(all).count, 200)
        XCTAssertTrue(all.contains("{\"text\":\"m7\",\"subject\":\"core.orders\"}"), all.prefix(3).joined())
    }

    func testAServerRestartedMidRunLosesNothingAndALostOneFailsTheRunAfterLostAfter() throws {
        try writeOrders(1...300)
        let consumer = try startConsumer(
            consumerPipeline(durable: "writer", output: "out.jsonl", extra: ", lostAfter: 3s"))
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try publish().status, 0)
        waitForLines("out.jsonl", atLeast: 258)
        server.stop()
        Thread.sleep(forTimeInterval: 0.5)
        server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path, port: server.port)
        try writeOrders(301...600)
        XCTAssertEqual(try publish().status, 0)
        waitForLines("out.jsonl", atLeast: 515)
        XCTAssertEqual(Set(ids("out.jsonl")), Set((1...600).filter { $0 % 7 != 0 }), "nothing lost")

        // Gone for good: the run fails after lostAfter, saying so.
        server.stop()
        let output = consumer.communicate(input: [], timeout: 30)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertEqual(output.termination.status, 1, stderr)
        XCTAssertTrue(stderr.contains("lost the connection to the NATS server; reconnecting"), stderr)
        XCTAssertTrue(stderr.contains("reconnected to the NATS server at nats://127.0.0.1:\(server.port)"), stderr)
        XCTAssertTrue(stderr.contains("unreachable for"), stderr)
        server = nil
    }

    func testLintChecksTheParameters() throws {
        let file = path("bad.yaml")
        try """
        source: { nats: { url: "http://x", stream: ORDERS } }
        sink: stdout
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let lint = try runRivulet(["lint", file])
        XCTAssertEqual(lint.status, 2)
        XCTAssertTrue(
            lint.stdout.contains("bad.yaml:1:24: error: url 'http://x' is not a NATS URL")
                || lint.stderr.contains("is not a NATS URL"), lint.stdout + lint.stderr)
        XCTAssertTrue((lint.stdout + lint.stderr).contains("needs durable"), lint.stdout + lint.stderr)
    }
}
