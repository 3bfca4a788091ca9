import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// The `nats` source and sink against a real nats-server: publish, consume, acknowledge,
/// failed messages to a dead-letter subject, de-duplication by msgId, signals, a restarted
/// server, and the errors a user meets first (killed runners: NATSScaleOutTests).
final class NATSTests: OneNATSServerTestCase {
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

    func testASignalWhileConnectingEndsTheRunAtOnce() throws {
        // Signalled before its thread has the consumer: it once waited the whole drain timeout.
        for _ in 0..<5 {
            let runner = try startConsumer(consumerPipeline(durable: "writer", output: "out.jsonl"))
            waitForStderr(runner, containing: "nats: reading ORDERS/writer")
            let started = Date()
            let (status, stderr) = stop(runner)
            XCTAssertEqual(status, 143, stderr)
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, "ended at once, not at the drain timeout")
        }
    }

    func testMaxAckPendingBoundsWhatARunnerHolds() throws {
        try writeOrders(1...60)
        let setup = try startConsumer(consumerPipeline(durable: "setup", output: "setup.jsonl"))
        waitForStderr(setup, containing: "nats: reading ORDERS/setup")
        XCTAssertEqual(stop(setup).0, 143)
        XCTAssertEqual(try publish().status, 0)
        // Four held at a time, each 50 ms in delay: 60 take at least 15 rounds of 50 ms.
        let started = Date()
        let runner = try startConsumer(
            consumerPipeline(
                durable: "few", output: "out.jsonl", extra: ", maxAckPending: 4, batch: 10",
                ops: "- map: { id: .id }\n  - delay: 50ms"))
        waitForLines("out.jsonl", atLeast: 60)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(stop(runner).0, 143)
        XCTAssertEqual(ids("out.jsonl"), Array(1...60))
        XCTAssertGreaterThan(elapsed, 0.7, "no more than 4 in flight")
        XCTAssertLessThan(elapsed, 10, "a fetch follows as soon as a batch fits")
    }

    /// Messages an operator holds past ackWait (a 4 s window, ackWait 1 s) are said to be in
    /// progress while the runner lives, so the server does not deliver them again: the window
    /// counts each order once. (Before, each was delivered again every second it was held, and
    /// counted three or four times.)
    func testMessagesHeldPastAckWaitAreNotDeliveredAgainNorCountedTwice() throws {
        try writeOrders(1...100)
        let setup = try startConsumer(
            consumerPipeline(durable: "held", output: "setup.jsonl", extra: ", ackWait: 1s"))
        waitForStderr(setup, containing: "nats: reading ORDERS/held")
        XCTAssertEqual(stop(setup).0, 143)
        let runner = try startConsumer(
            consumerPipeline(
                durable: "held", output: "counts.jsonl", extra: ", ackWait: 1s",
                ops: "- aggregate: { every: 4s, fields: { n: count } }"))
        XCTAssertEqual(try publish().status, 0)
        waitForLines("counts.jsonl", atLeast: 1)
        Thread.sleep(forTimeInterval: 4.5)
        let (status, stderr) = stop(runner)
        XCTAssertEqual(status, 143, stderr)
        let counts = lines("counts.jsonl").compactMap { line -> Int? in
            guard let key = line.range(of: "\"n\":") else { return nil }
            return Int(line[key.upperBound...].prefix(while: \.isNumber))
        }
        XCTAssertEqual(counts.reduce(0, +), 100, "each order counted once: \(lines("counts.jsonl"))")
    }

    func testAFailingMessageIsRetriedThenDeadLettered() throws {
        try
            "{\"id\":1,\"qty\":2,\"price\":2.5}\n{\"id\":2,\"qty\":3,\"price\":\"free\"}\n{\"id\":3,\"qty\":1,\"price\":1}\n"
            .write(toFile: path("orders.jsonl"), atomically: true, encoding: .utf8)
        // DEAD (dead.>) first: the orders source, finding no stream for dead.orders, would make
        // ORDERS_DEAD for it, and then DEAD's subjects would overlap (the two start at once).
        let dead = try run(
            """
            source: { nats: { url: "\(server.url)", stream: DEAD, subject: "dead.>", durable: d, create: true } }
            sink: stdout
            """, ["--until", "1s"])
        XCTAssertEqual(dead.status, 0, dead.stderr)
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
        let letters = lines("dead.jsonl")
        XCTAssertEqual(letters.count, 1, "dead-lettered once, after its third delivery")
        XCTAssertTrue(letters.first?.contains("\"id\":2") ?? false, letters.joined())
        XCTAssertTrue(letters.first?.contains("free") ?? false, "the error names the value: \(letters.joined())")
    }

    func testAMissingStreamAndAWrongTokenAreClearErrors() throws {
        let missing = try run(
            """
            source: { nats: { url: "\(server.url)", stream: NOPE, durable: w } }
            sink: stdout
            """)
        XCTAssertEqual(missing.status, 1, missing.stderr)
        assertContains(missing.stderr, "stream 'NOPE' does not exist")
        XCTAssertTrue(missing.stderr.contains(":1:"), "located: \(missing.stderr)")

        // A server that wants a token.
        server.stop()
        let config = path("auth.conf")
        try "authorization { token: \"right-token\" }\n".write(toFile: config, atomically: true, encoding: .utf8)
        server = nil
        let guarded = try NATSServer(arguments: [
            "-a", "127.0.0.1", "-p", "-1", "-c", config, "-js", "-sd", path("js2"),
        ])
        defer { guarded.stop() }
        let wrong = try run(
            """
            source: { nats: { url: "\(guarded.url)", stream: ORDERS, durable: w, token: "${NATS_TOKEN}" } }
            sink: stdout
            """, environment: ["NATS_TOKEN": "wrong-secret-token"])
        XCTAssertEqual(wrong.status, 1, wrong.stderr)
        XCTAssertTrue(wrong.stderr.lowercased().contains("authorization"), wrong.stderr)
        XCTAssertFalse(wrong.stderr.contains("wrong-secret-token"), "the token is never printed: \(wrong.stderr)")
        // The sink is refused the same way, with the same exit code as the source.
        let wrongSink = try run(
            """
            source: { events: [{ at: 0ms, next: 1 }] }
            sink: { nats: { url: "\(guarded.url)", subject: orders.new, token: "${NATS_TOKEN}" } }
            """, environment: ["NATS_TOKEN": "wrong-secret-token"])
        XCTAssertEqual(wrongSink.status, 1, wrongSink.stderr)
        XCTAssertTrue(wrongSink.stderr.lowercased().contains("authorization"), wrongSink.stderr)
        XCTAssertFalse(wrongSink.stderr.contains("wrong-secret-token"), wrongSink.stderr)
    }

    func testTheSinkCreatesItsStreamOrSaysWhichStreamIsMissing() throws {
        let orders = """
            source: { events: [{ at: 0ms, next: { id: 1, customer: ada } }, { at: 1ms, complete: true }] }
            sink: { nats: { url: "\(server.url)", subject: "invoices.{{ .customer }}", msgId: "{{ .id }}"
            """
        let noStream = try run(orders + ", retries: 0 } }\n")
        XCTAssertEqual(noStream.status, 1, noStream.stderr)
        assertContains(
            noStream.stderr, "no JetStream stream stores 'invoices.ada': give this sink stream: NAME and create: true")
        XCTAssertTrue(
            noStream.stderr.contains("1 element read, 0 written"), "not stored, not written: \(noStream.stderr)")
        let missing = try run(orders + ", stream: INVOICES } }\n")
        XCTAssertEqual(missing.status, 1, "as the source's: \(missing.stderr)")
        assertContains(missing.stderr, "stream 'INVOICES' does not exist on")
        XCTAssertTrue(missing.stderr.contains(":2:"), "located: \(missing.stderr)")
        let created = try run(orders + ", stream: INVOICES, create: true } }\n")
        XCTAssertEqual(created.status, 0, created.stderr)
        // The created stream stores invoices.*: another customer's invoice is stored too.
        let read = try run(
            """
            source: { nats: { url: "\(server.url)", stream: INVOICES, subject: "invoices.>", durable: r } }
            ops: [{ take: 1 }]
            sink: stdout
            """)
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout, "{\"id\":1,\"customer\":\"ada\"}\n")
        // Another stream for subjects INVOICES stores: the error names INVOICES, not the server's
        // "subjects overlap" alone.
        let overlapping = try run(orders + ", stream: BILLS, create: true } }\n")
        XCTAssertEqual(overlapping.status, 1, overlapping.stderr)
        assertContains(
            overlapping.stderr,
            "cannot create stream 'BILLS': its subjects 'invoices.*' overlap those stream 'INVOICES' stores",
            "read that stream (stream: INVOICES)")
        let lint = try run(
            "source: { events: [] }\nsink: { nats: { url: \"\(server.url)\", subject: a, create: true } }\n")
        XCTAssertEqual(lint.status, 2, lint.stderr)
        assertContains(lint.stderr, "create needs stream")
    }

    /// A publish the client refuses at once (larger than the server's max_payload) while the
    /// others wait behind maxInFlight fails where it stands (onError: skip drops it), and the ones
    /// waiting after it go on, in order: the sink's hand-over of waiting publishes, entered again
    /// from the failure, neither stalls nor sends one twice.
    func testAPublishRefusedWhileOthersWaitIsSkippedAndTheRestGoOnInOrder() throws {
        let oversized = String(repeating: "x", count: 2 << 20)
        let lines = (1...20).map { id in "{\"id\": \(id), \"pad\": \"\(id == 7 ? oversized : "")\"}" }
        let text = lines.joined(separator: "\n") + "\n"
        try text.write(toFile: path("orders.jsonl"), atomically: true, encoding: .utf8)
        let published = try run(
            """
            source: { fixture: \(path("orders.jsonl")) }
            sink: { nats: { url: "\(server.url)", subject: late.orders, stream: LATE, create: true, maxInFlight: 1, retries: 0, onError: skip } }
            """)
        XCTAssertEqual(published.status, 0, published.stderr)
        assertContains(published.stderr, "Maximum Payload Exceeded", "20 elements read, 19 written, 1 error")
        // Exactly the 19: the reader below takes 19, which would hide one stored twice after them.
        XCTAssertEqual(try storedMessages("LATE"), 19)
        let read = try run(
            """
            source: { nats: { url: "\(server.url)", stream: LATE, subject: "late.>", durable: r } }
            ops: [{ take: 19 }, { map: .id }]
            sink: stdout
            """)
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout, (1...20).filter { $0 != 7 }.map { "\($0)\n" }.joined())
    }

    func testAConsumerWithOtherSettingsIsAClearErrorEveryTime() throws {
        let first = try startConsumer(consumerPipeline(durable: "writer", output: "out.jsonl"))
        Thread.sleep(forTimeInterval: 0.5)
        _ = stop(first)
        // Twenty times: the run ends while the client's threads still call back (a crash, once).
        for _ in 0..<20 {
            let other = try run(consumerPipeline(durable: "writer", output: "other.jsonl", extra: ", ackWait: 2s"))
            XCTAssertEqual(other.status, 1, other.stderr)
            assertContains(
                other.stderr,
                "consumer 'writer' on stream 'ORDERS' exists with other settings: ackWait 30000ms (the file: 2000ms)")
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
        let (status, stderr) = stop(one, SIGINT)
        XCTAssertEqual(status, 130)
        // Closing its own connection is no loss: nothing says it is reconnecting.
        XCTAssertFalse(stderr.contains("lost the connection"), stderr)
        assertContains(stderr, "run interrupted: ")
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
        let expected = Set((1...600).filter { $0 % 7 != 0 })
        waitForIDs("out.jsonl", expected)
        XCTAssertEqual(Set(ids("out.jsonl")), expected, "nothing lost")

        // Gone for good: the run fails after lostAfter, saying so.
        server.stop()
        let output = consumer.communicate(input: [], timeout: 30)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertEqual(output.termination.status, 1, stderr)
        assertContains(
            stderr, "lost the connection to the NATS server; reconnecting",
            "reconnected to the NATS server at nats://127.0.0.1:\(server.port)", "unreachable for")
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
