import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// Timed operators on event time: elements carry their time (`.t`, in seconds here) and arrive
/// on the run's clock in whatever order and pace the input gives.
final class EventTimeTests: LeakCheckingTestCase {
    /// The pipeline with `ops` after an event-time source of `arrivals` (event time in seconds,
    /// arriving `pace` ms apart on the run's clock), recorded.
    private func run(
        _ arrivals: [Double], pace: Int = 0, eventTime: String = "{ time: .t * 1000, maxDelay: 10s }",
        ops: String, until: Int = 600_000, extra: String = "", sinks: String = ""
    ) throws -> PipelineHarness {
        var lines = arrivals.enumerated().map { index, t in
            "    - { at: \(index * pace)ms, next: { t: \(t == t.rounded() ? String(Int(t)) : String(t)) } }"
        }
        lines.append("    - { at: \(arrivals.count * pace)ms, complete: true }")
        return try PipelineHarness().run(
            """
            streams:
              main:
                source:
                  events:
            \(lines.map { "      " + $0 }.joined(separator: "\n"))
                eventTime: \(eventTime)
                ops:
            \(ops.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n"))
            \(extra)
            sinks:
              - { stream: main, record: out }
            \(sinks)
            """, until: until)
    }

    /// The elements recorded, without their times.
    private func elements(_ harness: PipelineHarness, _ label: String = "out") -> [String] {
        (harness.recorders[label]?.events ?? []).compactMap { _, event in
            if case .next(let value) = event { return "\(value)" }
            return nil
        }
    }

    func testElementsOutOfOrderWithinMaxDelayGoOnInTimeOrder() throws {
        let harness = try run([10, 5, 20, 15, 12, 100], ops: "- map: .t")
        XCTAssertEqual(elements(harness), ["5", "10", "12", "15", "20", "100"])
    }

    func testAnElementBehindTheWatermarkIsDroppedAndCounted() throws {
        // After 30 the watermark is 20: 12 is late; 25 is not.
        let harness = try run([10, 30, 12, 25], ops: "- map: .t")
        XCTAssertEqual(elements(harness), ["10", "25", "30"])
        let summary = harness.skipped
        XCTAssertEqual(summary.count, 1, "\(summary)")
        XCTAssertTrue(summary[0].contains("eventTime skipped 1 element late, behind the watermark"), summary[0])
        XCTAssertTrue(
            summary[0].hasSuffix("the first: time 1970-01-01T00:00:12Z behind the watermark 1970-01-01T00:00:20Z"),
            summary[0])
    }

    func testLateSideSendsTheLateElementsToTheirSideStream() throws {
        let harness = try run(
            [10, 30, 12, 25, 1], eventTime: "{ time: .t * 1000, maxDelay: 10s, late: side }", ops: "- map: .t",
            extra: "  late:\n    source: { stream: main.late }\n    ops: [ { map: .t } ]",
            sinks: "  - { stream: late, record: late }")
        XCTAssertEqual(elements(harness), ["10", "25", "30"])
        XCTAssertEqual(elements(harness, "late"), ["12", "1"])
    }

    func testDebounceOnEventTimeIsASessionWhateverThePace() throws {
        // Views at 0, 10, 20 s (one session), then 60, 65 (another), arriving out of order.
        for pace in [0, 1, 5000] {
            let harness = try run([10, 0, 20, 65, 60], pace: pace, ops: "- debounce: 30s\n- map: .t")
            XCTAssertEqual(elements(harness), ["20", "65"], "pace \(pace) ms")
        }
    }

    func testTumblingAndSessionWindowsCollectByEventTime() throws {
        let arrivals: [Double] = [1, 12, 3, 29, 31, 44, 95, 70]
        let tumbling = try run(
            arrivals, eventTime: "{ time: .t * 1000, maxDelay: 30s }", ops: "- window: 30s\n- map: map(., .t)")
        // Windows aligned to the epoch: [0, 30), [30, 60), [60, 90), [90, 120).
        XCTAssertEqual(elements(tumbling), ["[1,3,12,29]", "[31,44]", "[70]", "[95]"])
        let sessions = try run(
            arrivals, eventTime: "{ time: .t * 1000, maxDelay: 30s }",
            ops: "- window: { sessionGap: 20s }\n- map: map(., .t)")
        XCTAssertEqual(elements(sessions), ["[1,3,12,29,31,44]", "[70]", "[95]"])
    }

    func testAggregateWindowsAreMinutesOfTheCalendar() throws {
        // 10:00:50, 10:01:02, 10:00:55 (out of order within maxDelay), 10:01:10, 10:02:01.
        let base = 1_795_600_800.0
        let harness = try run(
            [base + 50, base + 62, base + 55, base + 70, base + 121],
            ops: "- aggregate: { every: 1m, fields: { n: count } }\n- map: \"{start: formatTime(.start), n: .n}\"")
        XCTAssertEqual(
            elements(harness),
            [
                #"{"start":"2026-11-25T10:00:00Z","n":2}"#, #"{"start":"2026-11-25T10:01:00Z","n":2}"#,
                #"{"start":"2026-11-25T10:02:00Z","n":1}"#,
            ])
    }

    func testAggregateRightBehindEventTimeCountsAsElementsComeAndGivesWhatWaitingGives() throws {
        // 300 elements up to 8 s out of order, several in one millisecond, keys whose earliest
        // element comes after a later one of theirs, equal values for min and max. Right behind
        // eventTime, aggregate counts each as it comes; with a map between, they wait for the
        // watermark. The objects, and their order, must be the same.
        var events: [String] = []
        var random: UInt64 = 7
        for index in 0..<300 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let t = Swift.max(0, index * 400 - Int(random >> 33) % 8_000) / 3 * 3
            events.append(
                "{ at: \(index)ms, next: { t: \(t), k: k\(Int(random >> 40) % 7), v: \(Int(random >> 20) % 5) } }")
        }
        func objects(between: String) throws -> [String] {
            let harness = try PipelineHarness().run(
                """
                source: { events: [\(events.joined(separator: ", ")), { at: 300ms, complete: true }] }
                eventTime: { time: .t, maxDelay: 10s }
                ops:
                \(between)
                  - aggregate:
                      by: .k
                      every: 10s
                      fields:
                        n: count
                        sum: { sum: .v }
                        avg: { avg: .v }
                        low: { min: .v }
                        high: { max: .v }
                        first: { first: .v }
                        last: { last: .v }
                        firstTime: { first: .t }
                sink: { record: out }
                """, until: 600_000)
            return elements(harness)
        }
        let asTheyCome = try objects(between: "")
        XCTAssertGreaterThan(asTheyCome.count, 70)
        XCTAssertEqual(asTheyCome, try objects(between: "  - map: ."))
    }

    func testThePictureInTheDocs() throws {
        // docs/images/event-time.svg: a :03, c :12, b :09, d :41, e :25 (late), windows of 30 s.
        let base = 1_795_600_800.0
        let harness = try run(
            [base + 3, base + 12, base + 9, base + 41, base + 25],
            ops: """
                - aggregate: { every: 30s, fields: { n: count, first: { first: .t }, last: { last: .t } } }
                - map: "{start: formatTime(.start), n: .n, first: .first - \(Int(base)), last: .last - \(Int(base))}"
                """)
        XCTAssertEqual(
            elements(harness),
            [
                #"{"start":"2026-11-25T10:00:00Z","n":3,"first":3,"last":12}"#,
                #"{"start":"2026-11-25T10:00:30Z","n":1,"first":41,"last":41}"#,
            ])
        XCTAssertTrue(harness.skipped.first?.contains("skipped 1 element late") ?? false, "\(harness.skipped)")
    }

    func testAllowedLatenessUpdatesAnEmittedWindowAndIsLateBeyondIt() throws {
        // 10:00:50 (a), 10:01:05 (b), 10:01:20 (a: the watermark, 10:01:10, passes the first
        // window's end), then 10:00:58 (a, 12 s behind: within 30 s, an update), 10:00:20 (b, 50 s
        // behind: late) and 10:01:12 (b, within the open window: counted as usual).
        let base = 1_795_600_800.0
        let harness = try run(
            [base + 50, base + 65, base + 80, base + 58, base + 20, base + 72],
            eventTime: "{ time: .t * 1000, maxDelay: 10s }",
            ops: """
                - map: "{t: .t, k: .t == \(Int(base + 65)) || .t == \(Int(base + 20)) || .t == \(Int(base + 72)) ? 'b' : 'a'}"
                - aggregate: { by: .k, every: 1m, allowedLateness: 30s, fields: { n: count } }
                - map: "{key: .key, start: formatTime(.start), n: .n, update: .update ?? false}"
                """)
        XCTAssertEqual(
            elements(harness),
            [
                #"{"key":"a","start":"2026-11-25T10:00:00Z","n":1,"update":false}"#,
                #"{"key":"a","start":"2026-11-25T10:00:00Z","n":2,"update":true}"#,
                #"{"key":"b","start":"2026-11-25T10:01:00Z","n":2,"update":false}"#,
                #"{"key":"a","start":"2026-11-25T10:01:00Z","n":1,"update":false}"#,
            ])
        XCTAssertTrue(harness.skipped.first?.contains("skipped 1 element late") ?? false, "\(harness.skipped)")
        let refused = PipelineHarness().diagnostics(
            "source: { events: [] }\nops:\n  - aggregate: { allowedLateness: 1m, fields: { n: count } }\nsink: stdout\n"
        )
        XCTAssertEqual(refused.first, "3:35: aggregate: allowedLateness needs every, the length of the windows")
    }

    func testAllowedLatenessOfAWindowEmitsItAgainWithTheLateElement() throws {
        // Windows of a minute from the epoch. 80 s moves the
        // watermark to 70 s: [0, 60) was emitted at 60 s. 58 s comes 12 s behind it (within 30 s):
        // the window goes out again with it; 20 s, 50 s behind, is late.
        let harness = try run(
            [10, 65, 80, 58, 20, 72, 130],
            ops: "- map: .t\n- window: { every: 1m, allowedLateness: 30s }")
        XCTAssertEqual(elements(harness), ["[10]", "[10,58]", "[65,72,80]", "[130]"])
        XCTAssertTrue(harness.skipped.first?.contains("skipped 1 element late") ?? false, "\(harness.skipped)")
        // Sliding windows of 1 m every 30 s: 58 s joins [0, 60) (emitted: again) and [30, 90) (open,
        // at its end).
        let sliding = try run(
            [10, 65, 80, 58, 130],
            ops: "- map: .t\n- window: { every: 1m, slide: 30s, allowedLateness: 30s }")
        XCTAssertEqual(elements(sliding), ["[10]", "[10,58]", "[65,58,80]", "[65,80]", "[130]", "[130]"])
        let refused = PipelineHarness().diagnostics(
            "source: { events: [] }\nops:\n  - window: { count: 5, allowedLateness: 1m }\nsink: stdout\n")
        XCTAssertEqual(refused.first, "3:42: window: allowedLateness is for time windows: give every, without count")
    }

    func testAnElementAndATimerOfTheSameMillisecondRunElementFirstAsOnTheRunClock() throws {
        // RxSwift's order (debounce-009, throttle-011): input of a tick before the timers due then.
        // Before, on event time the timer went first: debounce gave 0, 1.5 and throttle 0, 0.5, 1.
        for maxDelay in ["0ms", "10s"] {
            let eventTime = "{ time: .t * 1000, maxDelay: \(maxDelay) }"
            XCTAssertEqual(
                elements(try run([0, 1, 1.5], eventTime: eventTime, ops: "- debounce: 1s\n- map: .t")), ["1.5"],
                maxDelay)
            XCTAssertEqual(
                elements(try run([0, 0.5, 1], eventTime: eventTime, ops: "- throttle: 1s\n- map: .t")), ["0", "1"],
                maxDelay)
            // Two elements of one millisecond both go before its timer, however they are read: the
            // first opens a window (and drops 0.5), the second waits in it and comes out at its end.
            XCTAssertEqual(
                elements(try run([0, 0.5, 1, 1], eventTime: eventTime, ops: "- throttle: 1s\n- map: .t")),
                ["0", "1", "1"], maxDelay)
        }
        // The same on the run clock, for comparison: the same pipeline without eventTime.
        let runClock = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: 0 }, { at: 1000ms, next: 1 }, { at: 1500ms, next: 1.5 }] }
            ops: [{ debounce: 1s }]
            sinks: [{ record: out }]
            """)
        XCTAssertEqual(elements(runClock), ["1.5"])
    }

    func testTimeWindowsOnEventTimeAreAlignedToTheEpochWhereverReadingStarted() throws {
        // The docs said the first element's time minus maxDelay ([7000, 12000] [18000]); the run
        // aligned to the epoch only because the clock read 0 before its first element.
        let base = 1_000_000_000_000
        let tumbling = try run(
            [7, 12, 18].map { Double(base / 1000 + $0) }, eventTime: "{ time: .t * 1000, maxDelay: 0ms }",
            ops: "- window: 10s\n- map: map(., .t % 1000)")
        XCTAssertEqual(elements(tumbling), ["[7]", "[12,18]"])
        // A group opened mid-stream gets the same windows: b's first element, 15, is not its origin.
        let events =
            [("a", 7), ("a", 12), ("b", 15), ("b", 21), ("a", 31)].enumerated().map { index, pair in
                "      - { at: \(index)ms, next: { k: \(pair.0), t: \(base + pair.1 * 1000) } }"
            } + ["      - { at: 5ms, complete: true }"]
        let grouped = try PipelineHarness().run(
            """
            source:
              events:
            \(events.joined(separator: "\n"))
            eventTime: { time: .t, maxDelay: 0ms }
            ops:
              - groupBy: { key: .k, ops: [{ window: 10s }] }
              - map: "map(., .k + string((.t - \(base)) / 1000))"
            sinks: [{ record: out }]
            """)
        XCTAssertEqual(elements(grouped), ["[\"a7\"]", "[\"a12\"]", "[\"b15\"]", "[\"b21\"]", "[\"a31\"]"])
    }

    func testEveryTimedOperatorsReferenceSaysWhichClockItRunsOnAndHowItIsAligned() {
        for name in ["debounce", "throttle", "sample", "buffer", "delay", "timeout", "interval", "timer"] {
            let docs = BuiltinComponents.all.first { $0.name == name }?.docs ?? ""
            XCTAssertTrue(docs.contains("Timing: on the pipeline's clock"), name)
            XCTAssertTrue(docs.contains("counts from the first element's time minus maxDelay"), name)
        }
        for name in ["window", "aggregate"] {
            XCTAssertTrue(
                BuiltinComponents.all.first { $0.name == name }?.docs.contains("aligned to the epoch") == true, name)
        }
    }

    func testMaxAheadRefusesOneElementFarAheadOfTheOthersAndLetsAJumpThrough() throws {
        // One element in the year 9999 moved the watermark there: everything after it was late.
        let bogus = 253_402_300_799.0
        let without = try run(
            [0, 1, 2, bogus, 3, 4, 5], eventTime: "{ time: .t * 1000, maxDelay: 0ms }", ops: "- map: .t")
        XCTAssertEqual(elements(without), ["0", "1", "2", "253402300799"])
        let guarded = try run(
            [0, 1, 2, bogus, 3, 4, 5], eventTime: "{ time: .t * 1000, maxDelay: 0ms, maxAhead: 24h }", ops: "- map: .t")
        XCTAssertEqual(elements(guarded), ["0", "1", "2", "3", "4", "5"])
        XCTAssertTrue(
            guarded.skipped.first?.contains("eventTime skipped 1 element far ahead of the others (maxAhead)") ?? false,
            "\(guarded.skipped)")
        // A jump the next element follows is time going on: it waits one element, then goes on.
        let jump = try run(
            [0, 1, 200_000, 200_001, 200_002], eventTime: "{ time: .t * 1000, maxDelay: 0ms, maxAhead: 24h }",
            ops: "- map: .t")
        XCTAssertEqual(elements(jump), ["0", "1", "200000", "200001", "200002"])
        XCTAssertEqual(jump.skipped, [])
        // One far ahead at the end: nothing came to refuse it.
        let last = try run(
            [0, 1, bogus], eventTime: "{ time: .t * 1000, maxDelay: 0ms, maxAhead: 24h }", ops: "- map: .t")
        XCTAssertEqual(elements(last), ["0", "1", "253402300799"])
    }

    func testThrottleSampleBufferDelayAndTimeoutRunOnEventTime() throws {
        let arrivals: [Double] = [0, 1, 2, 12, 11, 30]
        XCTAssertEqual(
            elements(try run(arrivals, ops: "- throttle: { dueTime: 10s, latest: false }\n- map: .t")),
            ["0", "11", "30"])
        // Periods from the first element's time minus maxDelay: ticks at 0, 10, 20, 30. An element
        // of a tick's millisecond goes before the tick, as on the run clock: 0 ends the first
        // buffer; 30, then the end, the last (its tick never comes).
        XCTAssertEqual(
            elements(try run(arrivals, ops: "- buffer: { timeSpan: 10s, count: 100 }\n- map: map(., .t)")),
            ["[0]", "[1,2]", "[11,12]", "[30]"])
        XCTAssertEqual(elements(try run(arrivals, ops: "- delay: 5s\n- map: .t")), ["0", "1", "2", "11", "12", "30"])
        // 12 → 30 is 18 s of event time without an element: a 15 s timeout fails the stream.
        let timedOut = try run(arrivals, ops: "- timeout: 15s\n- map: .t")
        XCTAssertEqual(elements(timedOut), ["0", "1", "2", "11", "12"])
        guard case .failed? = timedOut.outcome else { return XCTFail("\(String(describing: timedOut.outcome))") }
    }

    func testSampleSlidingAndCountWindowsAndTimersInsideInnerStreamsRunOnEventTime() throws {
        let arrivals: [Double] = [1, 12, 3, 29, 31, 44, 95, 70]
        // sample every 20 s from −9 (first time minus maxDelay): ticks at 11, 31, 51, 71 (31 comes
        // before the tick of its millisecond); 70 comes after 95, 25 s behind: late. At the end the
        // latest, 95, is emitted.
        XCTAssertEqual(
            elements(try run(arrivals, ops: "- sample: 20s\n- map: .t")), ["3", "31", "44", "95"])
        // Sliding windows: the same windows whatever the pace of the input.
        let slidingOps = "- window: { every: 40s, slide: 20s }\n- map: map(., .t)"
        let sliding = elements(try run(arrivals, eventTime: "{ time: .t * 1000, maxDelay: 30s }", ops: slidingOps))
        XCTAssertEqual(sliding.count, 5, "\(sliding)")
        for pace in [1, 7000] {
            XCTAssertEqual(
                elements(
                    try run(arrivals, pace: pace, eventTime: "{ time: .t * 1000, maxDelay: 30s }", ops: slidingOps)),
                sliding, "pace \(pace) ms")
        }
        XCTAssertEqual(
            elements(try run(arrivals, ops: "- window: { every: 1h, count: 3 }\n- map: map(., .t)")),
            ["[1,3,12]", "[29,31,44]", "[95]"])
        // A timer inside flatMap waits 5 s of event time: the first fires once the watermark (the
        // second element, 20, minus 10) passes 5; at the end of the input the clock is at the last
        // element's time, 20, and then follows the run's own: the second fires 5 s of the run later.
        let timers = try run([0, 20], ops: "- flatMap: { source: { timer: 5s } }")
        XCTAssertEqual(timers.events(), ["0: 0", "5000: 0", "5000: completed"])
    }

    func testTwoEventTimeStreamsMergeInTimeOrderAndAnIdleOneStopsHoldingTheWatermark() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              a:
                source:
                  events:
                    - { at: 0ms, next: { s: a, t: 1 } }
                    - { at: 10ms, next: { s: a, t: 30 } }
                    - { at: 20ms, next: { s: a, t: 61 } }
                    - { at: 90s, next: { s: a, t: 200 } }
                    - { at: 100s, complete: true }
                eventTime: { time: .t * 1000, idle: 5s }
              b:
                source:
                  events:
                    - { at: 5ms, next: { s: b, t: 20 } }
                    - { at: 100s, complete: true }
                eventTime: { time: .t * 1000, idle: 5s }
              both:
                source: { stream: a }
                ops:
                  - merge: { streams: [b] }
                  - map: "join([.s, .t], '')"
            sinks:
              - { stream: both, record: out }
            """, until: 200_000)
        let events = harness.recorders["out"]?.events ?? []
        let seen = events.compactMap { time, event -> String? in
            if case .next(let value) = event { return "\(time): \(value)" }
            return nil
        }
        // a1 waits for b (the lowest watermark); b20 lets a1 through. b then goes quiet: after its
        // 5 s idle time it no longer holds a back, so a30 and a61 go on long before b ends.
        XCTAssertEqual(
            seen.prefix(3).map { $0.split(separator: " ").last.map(String.init) ?? "" },
            ["\"a1\"", "\"b20\"", "\"a30\""])
        XCTAssertLessThan(events.first { "\($0.1)".contains("a61") }?.0 ?? .max, 90_000, "\(seen)")
    }

    func testLintSaysWhatIsWrongWithATimeAndSuggestsEventTimeForAggregateTime() {
        let harness = PipelineHarness()
        func lint(_ eventTime: String, _ ops: String = "[]") -> [String] {
            harness.diagnostics("source: { events: [] }\neventTime: \(eventTime)\nops: \(ops)\nsink: stdout\n")
        }
        XCTAssertEqual(lint("{ time: 1000 }").first, "2:20: eventTime: 'time' is the same for every element")
        XCTAssertEqual(lint("{ time: \"'soon'\" }").first, "2:20: eventTime: 'time' gives string \"soon\", not a time")
        XCTAssertEqual(
            lint("{ time: \"parseTime(.t, '%Y-%q')\" }").first?.contains("unknown directive %q"), true,
            "\(lint("{ time: \"parseTime(.t, '%Y-%q')\" }"))")
        XCTAssertEqual(lint("{ time: .t, maxDelay: -1s }").isEmpty, false)
        XCTAssertEqual(lint("{ time: .ts }"), [])
        XCTAssertEqual(lint("{ time: parseTime(.ts) }"), [])
        XCTAssertEqual(lint("{ time: .t, maxDelay: 5s, late: keep }").first?.contains("late"), true)
        let aggregate = harness.diagnostics(
            "source: { events: [] }\nops:\n  - aggregate: { every: 1m, time: .ts, fields: { n: count } }\nsink: stdout\n"
        )
        XCTAssertEqual(
            aggregate.first?.contains("3:35: aggregate: 'time' counts elements in the order they come"), true,
            "\(aggregate)")
    }
}
