import BinaryTestSupport
import Foundation
import RivuletTestSupport
import Synchronization
import XCTest

/// Event time gives the same output however the input is read: at full speed, paced in real
/// time, on the virtual clock, and split over runs with `--state` stopped by a signal or killed.
final class EventTimeRunTests: BinaryTestCase {
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Sessions per user of the clickstream fixture, written to `sessions.jsonl`, from `source`.
    private func pipeline(source: String) throws -> String {
        let fixture = Repository.root.appendingPathComponent("Pipelines/fixtures/clickstream.jsonl").path
        let file = path("sessions.yaml")
        try """
        name: sessions
        source: \(source.replacingOccurrences(of: "FIXTURE", with: fixture))
        eventTime: { time: "parseTime(.time, '%d/%b/%Y:%H:%M:%S %z')", maxDelay: 10s }
        ops:
          - groupBy: { key: .user, ops: [ { window: { sessionGap: 30s } } ] }
          - map: { user: ".[0].user", views: len(.), first: ".[0].time", last: ".[-1].time" }
        sink: { file: \(path("sessions.jsonl")) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    private func output() throws -> String {
        defer { try? FileManager.default.removeItem(atPath: path("sessions.jsonl")) }
        return try String(contentsOfFile: path("sessions.jsonl"), encoding: .utf8)
    }

    func testTwoRunsOfPageViewsPerMinuteWriteTheSameBytesWithNoTrailingSpace() throws {
        let pipeline = Repository.root.appendingPathComponent("Pipelines/page-views-per-minute.yaml").path
        var outputs: [Data] = []
        for (run, arguments) in [("one", ["--clock", "virtual"]), ("two", ["--metrics", "127.0.0.1:0"])] {
            let result = try runRivulet(
                ["run", pipeline] + arguments,
                environment: ["VIEWS_FILE": path("\(run).jsonl"), "LATE_VIEWS_FILE": path("\(run)-late.jsonl")])
            XCTAssertEqual(result.status, 0, result.stderr)
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: path("\(run).jsonl"))))
            XCTAssertEqual(
                try Data(contentsOf: URL(fileURLWithPath: path("\(run)-late.jsonl"))),
                try Data(contentsOf: URL(fileURLWithPath: path("one-late.jsonl"))))
        }
        XCTAssertEqual(outputs[0], outputs[1], "byte for byte")
        let lines = String(decoding: outputs[0], as: UTF8.self).split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 10)
        XCTAssertEqual(lines.filter { $0.hasSuffix(" ") }, [], "no line ends in a space")
    }

    func testTheSameInputGivesTheSameSessionsAtAnyPaceOnAnyClockAndAcrossStops() throws {
        let fast = try runRivulet(["run", try pipeline(source: "{ file: { path: FIXTURE, format: jsonl } }")])
        XCTAssertEqual(fast.status, 0, fast.stderr)
        let expected = try output()
        XCTAssertEqual(expected.split(separator: "\n").count, 12, expected)

        // 45 views, one every 20 ms of the run's clock.
        let paced = try pipeline(source: "{ fixture: { path: FIXTURE, every: 20ms } }")
        let real = try runRivulet(["run", paced])
        XCTAssertEqual(real.status, 0, real.stderr)
        XCTAssertEqual(try output(), expected, "paced in real time")

        let virtual = try runRivulet(["run", paced, "--clock", "virtual"])
        XCTAssertEqual(virtual.status, 0, virtual.stderr)
        XCTAssertEqual(try output(), expected, "on the virtual clock")

        for signal in [SIGINT, SIGKILL] {
            let state = ["--state", path("state-\(signal).db"), "--checkpoint-interval", "50ms"]
            let first = try startRivulet(["run", paced] + state, output: .null, error: .pipe)
            Thread.sleep(forTimeInterval: 0.5)  // about half of the views
            first.send(signal)
            let stopped = first.communicate(timeout: 60)
            XCTAssertEqual(stopped.termination, signal == SIGKILL ? .signalled(SIGKILL) : .exited(130))
            let second = try runRivulet(["run", paced] + state)
            XCTAssertEqual(second.status, 0, second.stderr)
            assertContains(second.stderr, "resuming 'sessions'")
            XCTAssertEqual(try output(), expected, "split over two runs by \(signal == SIGKILL ? "SIGKILL" : "SIGINT")")
        }
    }
    func testWindowsKeptForLateElementsCostTheSameHoweverManyAreKept() throws {
        // One window a millisecond, each kept 30 s for late elements: 30,000 kept at a time. Each
        // window closed once looked at every kept one (window: 40,000 elements took 60 s;
        // aggregate: 1,000,000 did not end in 120 s).
        let count = 100_000
        try (0..<count).map { "{\"t\":\($0)}" }.joined(separator: "\n").write(
            toFile: path("ms.jsonl"), atomically: true, encoding: .utf8)
        for step in [
            "window: { every: 1ms, allowedLateness: 30s }",
            "aggregate: { every: 1ms, allowedLateness: 30s, fields: { n: count } }",
        ] {
            let file = path("kept.yaml")
            try """
            source: { file: { path: \(path("ms.jsonl")), format: jsonl } }
            eventTime: { time: .t, maxDelay: 0ms }
            ops:
              - \(step)
            sink: { file: \(path("kept.jsonl")) }
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let result = try runRivulet(["run", file], timeout: 120)
            XCTAssertEqual(result.status, 0, result.stderr)
            let lines = try String(contentsOfFile: path("kept.jsonl"), encoding: .utf8).split(separator: "\n")
            XCTAssertEqual(lines.count, count, step)
        }
    }

    /// `sample` after `eventTime` gives the same answer from a file, on either clock, as from
    /// standard input: `1000, 1500, 4200` (the tick at 1000 finds the element of its own
    /// millisecond, which comes first; the last goes out at the tick after the end). The file is
    /// read while `sample` subscribes its source, before its ticks are armed: the event-time
    /// domain holds what it read until the next turn. (The real clock once never ended — `run
    /// interrupted: 4 read, 0 written` — the virtual one wrote nothing, and then only `4200`.)
    func testSampleAfterEventTimeFromAFileEndsOnEitherClock() throws {
        let times = "{\"t\":0}\n{\"t\":1000}\n{\"t\":1500}\n{\"t\":4200}\n"
        try times.write(toFile: path("times.jsonl"), atomically: true, encoding: .utf8)
        let expected = "{\"t\":1000}\n{\"t\":1500}\n{\"t\":4200}\n"
        for source in ["{ file: \(path("times.jsonl")) }", "{ stdin: { format: jsonl } }"] {
            let file = path("sample.yaml")
            try """
            source: \(source)
            eventTime: { time: .t, maxDelay: 0ms }
            ops:
              - sample: 1s
            sink: stdout
            """.write(toFile: file, atomically: true, encoding: .utf8)
            for clock in [[], ["--clock", "virtual"]] {
                let result = try runRivulet(["run", file] + clock, stdin: times, timeout: 20)
                XCTAssertEqual(result.status, 0, "\(source) \(clock): \(result.stderr)")
                XCTAssertEqual(result.stdout, expected, "\(source) \(clock)")
                assertContains(result.stderr, "run completed: 4 elements read, 3 written")
            }
        }
    }

    func testMaxKeysHoldsForAnAggregateSplitOverTheCoresByDefault() throws {
        // 150 keys in one open minute under maxKeys: 100. Split by default over 16 partitions, each
        // once allowed 100 of its own, so all 150 were held. The file is followed: the window stays
        // open, so every key is held at once, however the partitions' threads are scheduled.
        try (0..<150).map { "{\"t\":\($0),\"k\":\"k\($0)\"}" }.joined(separator: "\n").appending("\n").write(
            toFile: path("keys.jsonl"), atomically: true, encoding: .utf8)
        let file = path("keys.yaml")
        try """
        source: { file: { path: \(path("keys.jsonl")), format: jsonl, follow: true } }
        eventTime: { time: .t, maxDelay: 0ms }
        ops:
          - aggregate: { by: .k, every: 1m, maxKeys: 100, fields: { n: count } }
        sink: { file: \(path("keys.out.jsonl")) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let graph = try runRivulet(["graph", file])
        assertContains(graph.stdout, "split by")
        let result = try runRivulet(["run", file], timeout: 60)
        XCTAssertEqual(result.status, 1, result.stderr)
        assertContains(result.stderr, "error: aggregate: it holds 100 keys already (maxKeys); key ")
    }

    func testMaxAheadRefusesAnElementInTheYear9999AndSaysSoAsItHappens() throws {
        // Without it, one element in the year 9999 made 989 of the next 1,000 late.
        let lines = (0..<1000).map { "{\"t\":\($0 * 1000)}" }
        let bogus = "{\"t\":253402300799000}"
        try ([lines[0], lines[1], bogus] + lines.dropFirst(2)).joined(separator: "\n").write(
            toFile: path("times.jsonl"), atomically: true, encoding: .utf8)
        let file = path("ahead.yaml")
        try """
        streams:
          main:
            source: { file: { path: \(path("times.jsonl")), format: jsonl } }
            eventTime: { time: .t, maxDelay: 5s, maxAhead: 24h, late: side }
        sinks:
          - { stream: main, file: \(path("kept.jsonl")) }
          - { stream: main.late, file: \(path("refused.jsonl")) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runRivulet(["run", file])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            try String(contentsOfFile: path("kept.jsonl"), encoding: .utf8).split(separator: "\n").count, 1000)
        XCTAssertEqual(try String(contentsOfFile: path("refused.jsonl"), encoding: .utf8), bogus + "\n")
        let warning = try XCTUnwrap(result.stderr.range(of: "eventTime refused an element: time 9999-12-31T23:59:59Z"))
        let summary = try XCTUnwrap(result.stderr.range(of: "run completed"))
        XCTAssertLessThan(warning.lowerBound, summary.lowerBound, result.stderr)
    }

    func testAnElementHeldByMaxAheadSurvivesASIGKILLAndGoesOnOnce() throws {
        // The held element is in eventTime's checkpoint; its line is read past, so only the
        // checkpoint can bring it back after a SIGKILL.
        let far = 253_402_300_799_000
        try "{\"t\":0}\n{\"t\":1000}\n{\"t\":\(far)}\n".write(
            toFile: path("follow.jsonl"), atomically: true, encoding: .utf8)
        let file = path("held.yaml")
        try """
        name: held
        source: { file: { path: \(path("follow.jsonl")), format: jsonl, follow: true, poll: 20ms } }
        eventTime: { time: .t, maxDelay: 0ms, maxAhead: 24h }
        sink: { file: \(path("held.jsonl")) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let state = ["--state", path("held.db"), "--checkpoint-interval", "50ms"]
        let first = try startRivulet(["run", file] + state, output: .null, error: .pipe)
        Thread.sleep(forTimeInterval: 1.5)
        first.send(SIGKILL)
        XCTAssertEqual(first.communicate(timeout: 30).termination, .signalled(SIGKILL))
        // The next element follows it there: it goes on, before it.
        let append = FileHandle(forWritingAtPath: path("follow.jsonl"))!
        append.seekToEndOfFile()
        append.write(Data("{\"t\":\(far + 1000)}\n".utf8))
        try append.close()
        let second = try startRivulet(["run", file] + state, output: .null, error: .pipe)
        Thread.sleep(forTimeInterval: 1.5)
        second.send(SIGTERM)
        let stopped = second.communicate(timeout: 30)
        XCTAssertEqual(stopped.termination, .exited(143), String(decoding: stopped.standardError, as: UTF8.self))
        XCTAssertEqual(
            try String(contentsOfFile: path("held.jsonl"), encoding: .utf8),
            "{\"t\":0}\n{\"t\":1000}\n{\"t\":\(far)}\n{\"t\":\(far + 1000)}\n")
    }

    func testCountsPerWindowFromAFollowedFileKilledAtRandomAreThoseOfOneRun() throws {
        // 20,000 views of 40 users over an hour of event time, 5% up to 8 s out of order, appended
        // to a followed file in chunks while runs are killed at random: aggregate right behind
        // eventTime counts them as they come, and its open windows, the watermark and the file's
        // offset are checkpointed together.
        let total = 20_000
        let ops = """
                eventTime: { time: .ts, maxDelay: 10s }
                ops:
                  - aggregate:
                      by: .user
                      every: 20s
                      fields: { views: count, first: { first: .page }, last: { last: .page }, latest: { max: .ts } }
            sinks:
              - { stream: counts, file: counts.jsonl }
            """
        try """
        name: counts
        streams:
          views:
            source: { file: { path: logs/views.jsonl, follow: true, poll: 10ms } }
            ops:
              - take: \(total)
          counts:
            source: { stream: views }
        \(ops)
        """.write(toFile: path("follow.yaml"), atomically: true, encoding: .utf8)
        try "name: counts\nstreams:\n  counts:\n    source: { fixture: all.jsonl }\n\(ops)\n".write(
            toFile: path("whole.yaml"), atomically: true, encoding: .utf8)
        var all = Data()
        var random: UInt64 = 11
        for index in 0..<total {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var milliseconds = 1_795_600_800_000 + index * 180
            if (random >> 33) % 100 < 5 { milliseconds -= Int((random >> 20) % 8_000) }
            let user = "u\((random >> 40) % 40)"
            all.append(Data("{\"ts\":\(milliseconds),\"user\":\"\(user)\",\"page\":\"/p\(index % 13)\"}\n".utf8))
        }
        try all.write(to: URL(fileURLWithPath: path("all.jsonl")))
        // Under --state too: without it, the aggregate by key would be split over the cores, its
        // rows of one window in another order.
        let whole = try runRivulet(["run", path("whole.yaml"), "--state", path("whole.db")])
        XCTAssertEqual(whole.status, 0, whole.stderr)
        let expected = try Data(contentsOf: URL(fileURLWithPath: path("counts.jsonl")))
        XCTAssertGreaterThan(expected.split(separator: 0x0A).count, 2_000)
        try FileManager.default.removeItem(atPath: path("counts.jsonl"))
        try FileManager.default.createDirectory(atPath: path("logs"), withIntermediateDirectories: true)

        let bytes = [UInt8](all)
        let log = path("logs/views.jsonl")
        let killed = try runKilledAtRandom(
            ["run", path("follow.yaml"), "--state", path("s.db"), "--checkpoint-interval", "15ms"],
            whileWriting: {
                var offset = 0
                let descriptor = open(log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
                while offset < bytes.count {
                    let end = min(bytes.count, offset + Int.random(in: 1_000...8_000))
                    bytes[offset..<end].withUnsafeBytes { _ = Glibc.write(descriptor, $0.baseAddress, $0.count) }
                    offset = end
                    usleep(useconds_t.random(in: 10_000...40_000))
                }
                close(descriptor)
            })
        XCTAssertGreaterThan(killed, 5)
        let output = try Data(contentsOf: URL(fileURLWithPath: path("counts.jsonl")))
        XCTAssertTrue(output == expected, "the windows of one uninterrupted run, byte for byte (\(killed) kills)")
    }
}
