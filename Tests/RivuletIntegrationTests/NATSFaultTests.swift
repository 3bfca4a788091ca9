import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// Faults around NATS: bad messages among good ones, and a server that goes away under a sink.
final class NATSFaultTests: OneNATSServerTestCase {
    /// Under the default `onError: fail` every run that meets a bad message fails; a restarted
    /// runner must still write every good message and dead-letter the bad ones once they failed
    /// `maxDeliver` times (failed runs used up the good messages' deliveries too, once, until the
    /// server stopped delivering them).
    func testGoodMessagesSurviveRestartsAndBadOnesAreDeadLetteredAfterMaxDeliver() throws {
        // Good, not JSON, good, a quantity that is not a number, good.
        try """
        {"id":1,"qty":2,"price":2.5}
        "not json"
        {"id":3,"qty":1,"price":1}
        {"id":4,"qty":"two","price":1}
        {"id":5,"qty":3,"price":1}

        """.write(toFile: path("orders.jsonl"), atomically: true, encoding: .utf8)
        let dead = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: DEAD, subject: "dead.>", durable: d, create: true, format: text, metadata: _nats } }
            ops:
              - map: '{ text: .value, error: ._nats.headers["Rivulet-Error"] }'
            sink: { file: \(path("dead.jsonl")) }
            """)
        waitForStderr(dead, containing: "nats: reading DEAD/d")
        // Every run adds to one file (each would replace it otherwise).
        let pipeline = """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: w, create: true, maxDeliver: 3, nakDelay: 50ms, deadLetter: dead.orders } }
            ops:
              - filter: .qty > 0
              - map: { id: .id, total: .qty * .price }
            sink: { file: { path: \(path("out.jsonl")), mode: append } }
            """
        let setup = try startConsumer(pipeline)
        waitForStderr(setup, containing: "nats: reading ORDERS/w")
        XCTAssertEqual(stop(setup).0, 143)
        let published = try run(
            """
            source: { fixture: \(path("orders.jsonl")) }
            sink: { nats: { url: "\(natsURL)", subject: orders.new } }
            """)
        XCTAssertEqual(published.status, 0, published.stderr)

        // Each run fails on the first bad message it meets; five restarts are enough for two bad
        // messages of three deliveries each. A run that meets none goes on until stopped.
        // (A message given back by a failing run counts as delivered too, so the second bad one
        // may reach maxDeliver with fewer failures of its own.)
        var failures = 0
        var settled = false
        for _ in 0..<8 {
            let runner = try startConsumer(pipeline)
            let output = runner.communicate(input: [], timeout: 5)
            if output.timedOut {
                settled = true  // still running after 5 s, nothing bad left: killed, as a machine dies
                break
            }
            let stderr = String(decoding: output.standardError, as: UTF8.self)
            XCTAssertEqual(output.termination.status, 1, stderr)
            assertContains(stderr, "error:")
            failures += 1
        }
        XCTAssertTrue(settled, "a run after the bad messages were dead-lettered goes on")
        XCTAssertTrue((2...6).contains(failures), "\(failures) runs failed")
        waitForLines("dead.jsonl", atLeast: 2)
        XCTAssertEqual(stop(dead).0, 143)
        XCTAssertEqual(Set(ids("out.jsonl")), [1, 3, 5], "every good message written (at least once)")
        let letters = lines("dead.jsonl")
        XCTAssertEqual(letters.count, 2, letters.joined(separator: "\n"))
        XCTAssertTrue(letters.contains { $0.contains("not json") && $0.contains("is not JSON") }, letters.joined())
        XCTAssertTrue(letters.contains { $0.contains("two") && $0.contains("\"error\":\"") }, letters.joined())
    }

    func testDeadLettersGetAStreamOrTheUserIsToldWhyTheyComeBack() throws {
        // A dead letter no stream stored went back silently, again and again.
        try "\"not json\"\n".write(toFile: path("orders.jsonl"), atomically: true, encoding: .utf8)
        func consumer(durable: String, deadLetter: String, create: Bool) -> String {
            """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: \(durable), create: \(create), maxDeliver: 1, nakDelay: 50ms, deadLetter: \(deadLetter) }, onError: skip }
            sink: { file: \(path("\(durable).jsonl")) }
            """
        }
        // create: true makes a stream for them when none stores the subject.
        let creating = try startConsumer(consumer(durable: "w", deadLetter: "dead.orders", create: true))
        Thread.sleep(forTimeInterval: 1)
        // Without create and without a stream: said at start, and again when one comes back.
        let told = try startConsumer(consumer(durable: "v", deadLetter: "dead.other", create: false))
        Thread.sleep(forTimeInterval: 1)
        let published = try run(
            """
            source: { fixture: \(path("orders.jsonl")) }
            sink: { nats: { url: "\(natsURL)", subject: orders.new } }
            """)
        XCTAssertEqual(published.status, 0, published.stderr)
        Thread.sleep(forTimeInterval: 1.5)
        let (createdStatus, created) = stop(creating, SIGINT)
        XCTAssertEqual(createdStatus, 130, created)
        assertContains(created, "created stream 'ORDERS_DEAD' for the dead letters on 'dead.orders'")
        let (toldStatus, toldText) = stop(told, SIGINT)
        XCTAssertEqual(toldStatus, 130, toldText)
        assertContains(toldText, "no stream stores the dead letters on 'dead.other'")
        XCTAssertTrue(
            toldText.contains("cannot store a dead letter on 'dead.other'")
                && toldText.contains("create a stream that stores 'dead.other'"), toldText)
        // The first consumer's dead letter is in the stream made for it.
        let dead = try run(
            """
            source: { nats: { url: "\(natsURL)", stream: ORDERS_DEAD, subject: dead.orders, durable: r, format: text } }
            ops: [{ take: 1 }]
            sink: stdout
            """)
        XCTAssertEqual(dead.status, 0, dead.stderr)
        XCTAssertEqual(dead.stdout, "\"not json\"\n")
    }

    /// Makes the stream OUT (subjects out.>) and its durable consumer r: a reader that creates
    /// them, stopped once it reads.
    private func makeStreamOUT() throws {
        let reader = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: OUT, subject: "out.>", durable: r, create: true } }
            sink: { file: \(path("unused.jsonl")) }
            """)
        waitForStderr(reader, containing: "nats: reading OUT/r")
        XCTAssertEqual(stop(reader).0, 143)
    }

    /// The ids OUT holds, in the order it stored them, read through r once `count` came (and
    /// half a second for any more).
    private func idsStoredInOUT(atLeast count: Int) throws -> [Int] {
        let reader = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: OUT, subject: "out.>", durable: r } }
            sink: { file: \(path("stored.jsonl")) }
            """)
        waitForLines("stored.jsonl", atLeast: count)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(stop(reader).0, 143)
        return ids("stored.jsonl")
    }

    /// A server killed 20 times for 1 to 4 s while a sink publishes 3,000 elements with msgId:
    /// the run completes, and the stream holds each element once (a publish whose answer was lost
    /// once waited for ever, and a full buffer of outstanding publishes failed the run).
    func testTwentyServerOutagesUnderTheSinkLoseNothingAndNeverHang() throws {
        let count = 3000
        try makeStreamOUT()
        let writer = try startConsumer(
            """
            source: { interval: 20ms }
            ops:
              - take: \(count)
              - map: { id: . }
            sink: { nats: { url: "\(natsURL)", subject: out.items, msgId: "{{ .id }}", stream: OUT } }
            """)
        // Outages of 1 to 4 s, the same ones every time (a linear congruential sequence).
        var seed: UInt64 = 7
        for _ in 0..<20 {
            Thread.sleep(forTimeInterval: 0.5)
            server.stop(SIGKILL)
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            Thread.sleep(forTimeInterval: 1 + 3 * Double(seed >> 11) / Double(1 << 53))
            server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path, port: server.port)
        }
        let output = writer.communicate(input: [], timeout: 120)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertFalse(output.timedOut, "the run hung: \(stderr.suffix(2000))")
        XCTAssertEqual(output.termination.status, 0, String(stderr.suffix(2000)))
        let stored = try idsStoredInOUT(atLeast: count)
        XCTAssertEqual(stored.count, count, "each element stored once")
        XCTAssertEqual(Set(0..<count).subtracting(stored).sorted(), [], "nothing lost")
    }

    /// A server that stops answering (SIGSTOP) for 8 s under a sink publishing an element every
    /// millisecond: once publishes go unanswered for 5 s the sink keeps half as many outstanding
    /// (`rivulet_nats_publish_window` 500 of maxInFlight 1,000), and once the server answers
    /// again it grows back to 1,000; every element is stored once.
    func testASinkUnansweredInTimeHalvesItsPublishesOutstandingAndGrowsThemBack() throws {
        let count = 12_000
        try makeStreamOUT()
        let port = freeLoopbackPort()
        let file = path("window.yaml")
        try """
        source: { interval: 1ms }
        ops:
          - take: \(count)
          - map: { id: . }
        sink: { nats: { url: "\(natsURL)", subject: out.items, msgId: "{{ .id }}", stream: OUT } }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let writer = try startRivulet(["run", file, "--metrics", "127.0.0.1:\(port)"], output: .null, error: .pipe)
        let window = { () -> Double? in
            LoopbackHTTP.sample(
                LoopbackHTTP.get(port, "/metrics")?.body ?? "", "rivulet_nats_publish_window",
                [#"component="nats""#])
        }
        let started = Date(timeIntervalSinceNow: 10)
        while window() != 1000, Date() < started { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(window(), 1000, "the whole of maxInFlight at first")
        Thread.sleep(forTimeInterval: 1)
        server.process.send(SIGSTOP)
        Thread.sleep(forTimeInterval: 6.5)
        let narrowed = window()
        Thread.sleep(forTimeInterval: 1.5)
        server.process.send(SIGCONT)
        XCTAssertEqual(narrowed, 500, "halved once for the publishes that timed out together")
        let answered = Date(timeIntervalSinceNow: 10)
        while window() != 1000, Date() < answered { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(window(), 1000, "grown back by one with each answer")
        let output = writer.communicate(input: [], timeout: 120)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertEqual(output.termination.status, 0, String(stderr.suffix(2000)))
        let stored = try idsStoredInOUT(atLeast: count)
        XCTAssertEqual(stored.count, count, "each element stored once")
        XCTAssertEqual(Set(0..<count).subtracting(stored).sorted(), [], "nothing lost")
    }

    /// A server killed for a second while a sink publishes 100,000 elements as fast as it may:
    /// what was lost with it is sent again, and the stream stores none of it after maxInFlight or
    /// more later elements. (Those publishes waited out their answers while the others went on,
    /// and were stored up to 64,000 elements late: an event-time reader found them late.)
    func testAPublishSentAgainAfterAnOutageIsStoredFewerThanMaxInFlightAfterLaterOnes() throws {
        let count = 100_000
        let maxInFlight = 100
        try (0..<count).map { "{\"id\":\($0)}\n" }.joined()
            .write(toFile: path("in.jsonl"), atomically: true, encoding: .utf8)
        try makeStreamOUT()
        let writer = try startConsumer(
            """
            source: { fixture: \(path("in.jsonl")) }
            sink: { nats: { url: "\(natsURL)", subject: out.items, msgId: "{{ .id }}", stream: OUT, maxInFlight: \(maxInFlight) } }
            """)
        let deadline = Date(timeIntervalSinceNow: 30)
        while (try? storedMessages("OUT")) ?? 0 < UInt64(count / 5), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        server.stop(SIGKILL)
        Thread.sleep(forTimeInterval: 1)
        server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path, port: server.port)
        let output = writer.communicate(input: [], timeout: 120)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertEqual(output.termination.status, 0, String(stderr.suffix(2000)))
        let stored = try idsStoredInOUT(atLeast: count)
        XCTAssertEqual(stored.count, count, "each element stored once")
        var latest = -1
        var widest = 0
        for id in stored {
            widest = max(widest, latest - id)
            latest = max(latest, id)
        }
        print("stored after later elements by at most \(widest)")
        XCTAssertLessThan(widest, maxInFlight, "an element stored after \(widest) later ones")
    }
}
