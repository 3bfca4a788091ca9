@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @testable import Components

/// Each stateful component's checkpoint: a run stopped at a tick, its state taken as a checkpoint,
/// restored into a fresh pipeline, must give the rest of the output of an uninterrupted run.
final class CheckpointTests: LeakCheckingTestCase {
    /// The values (times removed) of an uninterrupted run, and of a run stopped at `tick` followed
    /// by a run resumed from the checkpoint taken then.
    private func outputs(
        _ text: String, stoppedAt tick: Int, services: (_ run: Int) -> [AnyObject] = { _ in [] }
    ) throws -> (whole: [String], resumed: [String]) {
        func values(_ lines: [String]) -> [String] { lines.map { String($0.drop { $0 != ":" }.dropFirst(2)) } }
        let (whole, resumed) = try timedOutputs(text, stoppedAt: tick, services: services)
        return (values(whole), values(resumed))
    }

    private func assertResumes(_ text: String, stoppedAt tick: Int, file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        let (whole, resumed) = try outputs(text, stoppedAt: tick)
        XCTAssertEqual(resumed, whole, file: file, line: line)
        XCTAssertEqual(whole.last, "completed", "the pipeline ran to its end", file: file, line: line)
    }

    private let numbers = """
        source: { events: { marbles: "-1-2-3-4-5-6-7-8-9|", values: { "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9 } } }
        """

    func testScanGoesOnFromItsAccumulatedValue() throws {
        try assertResumes(
            numbers + "\nops:\n  - scan: { seed: 100, accumulator: acc + . }\nsink: record", stoppedAt: 45)
    }

    func testDistinctUntilChangedRemembersTheLastKey() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 20ms, next: A }, { at: 30ms, next: b }, { at: 40ms, next: B }, { at: 50ms, next: c }, { at: 60ms, complete: true }] }
            ops:
              - distinctUntilChanged: lower(.)
            sink: record
            """
        let (whole, resumed) = try outputs(text, stoppedAt: 35)
        XCTAssertEqual(whole, ["\"a\"", "\"b\"", "\"c\"", "completed"])
        XCTAssertEqual(resumed, whole, "B, after b before the checkpoint, is still a repeat")
    }

    func testTakeAndSkipCountOnFromWhereTheyWere() throws {
        try assertResumes(numbers + "\nops:\n  - skip: 3\n  - take: 4\nsink: record", stoppedAt: 25)
        try assertResumes(numbers + "\nops:\n  - skip: 3\n  - take: 4\nsink: record", stoppedAt: 65)
    }

    func testAWasmModuleHandsItsStateOverThroughSnapshotAndRestore() throws {
        // The example's per-key limiter: its counts are the module's own state.
        let text = """
            source: { events: { marbles: "-a-b-a-a-b-a-b|", values: { a: { user: ana }, b: { user: bo } } } }
            ops:
              - wasm: { module: \(WasmTestModules.exampleFolder)/quota.wasm, function: quota, config: { key: user, limit: 2 } }
            sink: record
            """
        for tick in [25, 45, 65] {
            let (whole, resumed) = try outputs(text, stoppedAt: tick)
            XCTAssertEqual(
                whole, [#"{"user":"ana"}"#, #"{"user":"bo"}"#, #"{"user":"ana"}"#, #"{"user":"bo"}"#, "completed"])
            XCTAssertEqual(resumed, whole, "stopped at \(tick)")
        }
    }

    func testStartWithDoesNotRepeatItsValues() throws {
        try assertResumes(numbers + "\nops:\n  - startWith: [0, -1]\nsink: record", stoppedAt: 35)
    }

    /// The checkpoint the last `timedOutputs` took.
    private var lastSnapshot: Value?

    /// As `outputs`, with times: the resumed run's times, moved by the tick it was stopped at.
    /// `services` gives each run (0: uninterrupted, 1: stopped, 2: resumed) its own services.
    private func timedOutputs(
        _ text: String, stoppedAt tick: Int, services: (_ run: Int) -> [AnyObject] = { _ in [] }
    ) throws -> (whole: [String], resumed: [String]) {
        func lines(_ harness: PipelineHarness, after offset: Int = 0) -> [String] {
            (harness.recorders["out"]?.events ?? []).map { time, event in
                "\(time + offset): " + (event.element.map { "\($0)" } ?? (event.isStopEvent ? "completed" : ""))
            }
        }
        let whole = try PipelineHarness().run(text, services: services(0))
        let first = PipelineHarness()
        var snapshot: Value?
        let taking = Checkpoints(restored: [:], interval: .seconds(3600), scheduler: first.scheduler) {
            snapshot = $0
        }
        try first.run(text, until: tick, services: [taking] + services(1))
        taking.checkpoint()
        lastSnapshot = snapshot
        var restored: [String: Value] = [:]
        for (key, value) in snapshot?.objectValue ?? JSONObject() { restored[key] = value }
        let second = PipelineHarness()
        let resuming = Checkpoints(restored: restored, interval: .seconds(3600), scheduler: second.scheduler) { _ in }
        try second.run(text, services: [resuming] + services(2))
        return (lines(whole), lines(first) + lines(second, after: tick))
    }

    /// Checks that runs stopped at each of `ticks` and resumed from their checkpoints write
    /// `expected` (with times), the output of the uninterrupted run.
    private func assertResumesAsOneRun(
        _ text: String, stoppedAt ticks: [Int], writes expected: [String], _ message: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        for tick in ticks {
            let (whole, resumed) = try timedOutputs(text, stoppedAt: tick)
            XCTAssertEqual(whole, expected, message, file: file, line: line)
            XCTAssertEqual(resumed, whole, "stopped at \(tick)", file: file, line: line)
        }
    }

    func testDebounceKeepsItsPendingElementAndItsTimeLeft() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 20ms, next: ab }, { at: 50ms, next: abc }, { at: 100ms, complete: true }] }
            ops:
              - debounce: 15ms
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [25, 31, 55], writes: ["35: \"ab\"", "65: \"abc\"", "100: completed"])
    }

    func testDelayKeepsWhatWaitsWithTheTimeLeftForEach() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 12ms, next: b }, { at: 30ms, next: c }, { at: 31ms, complete: true }] }
            ops:
              - delay: 20ms
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [15, 31, 45], writes: ["30: \"a\"", "32: \"b\"", "50: \"c\"", "51: completed"])
    }

    func testRetryCountsTheAttemptsThatFailedAndASubscriptionAfterTheRestoreStartsAfresh() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 20ms, error: boom }] }
            ops:
              - retry: 3
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [15, 35, 55], writes: ["10: \"a\"", "30: \"a\"", "50: \"a\"", "60: completed"],
            "three attempts, then the error")
    }

    func testAggregateKeepsItsOpenWindowPerKeyAndTheTimeItHasLeft() throws {
        let text = """
            source: { events: [{ at: 10ms, next: { k: a, n: 1 } }, { at: 20ms, next: { k: b, n: 2.5 } }, { at: 35ms, next: { k: a, n: 3 } }, { at: 60ms, next: { k: a, n: 4 } }, { at: 90ms, complete: true }] }
            ops:
              - aggregate: { by: .k, every: 50ms, fields: { n: count, total: { sum: .n }, low: { min: .n }, mean: { avg: .n }, first: { first: .n } } }
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [5, 15, 40, 55, 70],
            writes: [
                #"50: {"key":"a","start":0,"n":2,"total":4,"low":1,"mean":2.0,"first":1}"#,
                #"50: {"key":"b","start":0,"n":1,"total":2.5,"low":2.5,"mean":2.5,"first":2.5}"#,
                #"90: {"key":"a","start":50,"n":1,"total":4,"low":4,"mean":4.0,"first":4}"#, "90: completed",
            ])
    }

    func testAggregateOnEventTimeKeepsItsOpenWindow() throws {
        let text = """
            source: { events: [{ at: 10ms, next: { k: a, ts: 1000 } }, { at: 20ms, next: { k: a, ts: 59000 } }, { at: 30ms, next: { k: b, ts: 61000 } }, { at: 40ms, complete: true }] }
            ops:
              - aggregate: { by: .k, every: 1m, time: .ts, fields: { n: count } }
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [15, 25, 35],
            writes: [#"30: {"key":"a","start":0,"n":2}"#, #"40: {"key":"b","start":60000,"n":1}"#, "40: completed"])
    }

    func testWindowKeepsItsOpenWindowsOfEveryKind() throws {
        let source = """
            source: { events: [{ at: 10ms, next: 1 }, { at: 20ms, next: 2 }, { at: 35ms, next: 3 }, { at: 60ms, next: 4 }, { at: 64ms, next: 5 }, { at: 100ms, next: 6 }, { at: 130ms, complete: true }] }
            """
        let kinds = [
            "{ every: 50ms }", "{ every: 40ms, slide: 20ms }", "{ sessionGap: 15ms }", "{ count: 2 }",
            "{ every: 50ms, count: 2 }",
            "{ every: 50ms, ops: [{ reduce: { seed: 0, accumulator: acc + . } }] }",
        ]
        for kind in kinds {
            let text = source + "\nops:\n  - window: \(kind)\nsink: record"
            for tick in [15, 30, 45, 62, 90, 110] {
                let (whole, resumed) = try timedOutputs(text, stoppedAt: tick)
                XCTAssertGreaterThan(whole.count, 2, kind)
                XCTAssertEqual(resumed, whole, "\(kind) stopped at \(tick)")
            }
        }
    }

    func testWindowRunsAgainTheOpsOfAWindowTheyWereStillRunning() throws {
        // The window [1, 2] closes at 50 ms; its ops take 30 ms, so a stop at 60 ms finds them running.
        let text = """
            source: { events: [{ at: 10ms, next: 1 }, { at: 20ms, next: 2 }, { at: 120ms, complete: true }] }
            ops:
              - window: { every: 50ms, ops: [{ reduce: { seed: 0, accumulator: acc + . } }, { delay: 30ms }] }
            sink: record
            """
        let (whole, resumed) = try timedOutputs(text, stoppedAt: 60)
        XCTAssertEqual(whole, ["80: 3", "120: completed"])
        XCTAssertEqual(resumed, ["90: 3", "120: completed"], "run again from the start of its ops after the restore")
    }

    func testWindowCompletesOnceItsOpsAreDoneAndItsLastStateHoldsNoneRunning() throws {
        // The stream ends at 55 ms while the ops of the window closed at 50 ms run until 80 ms.
        let text = """
            source: { events: [{ at: 10ms, next: 1 }, { at: 20ms, next: 2 }, { at: 55ms, complete: true }] }
            ops:
              - window: { every: 50ms, ops: [{ reduce: { seed: 0, accumulator: acc + . } }, { delay: 30ms }] }
            sink: record
            """
        let (whole, resumed) = try timedOutputs(text, stoppedAt: 70)
        XCTAssertEqual(whole, ["80: 3", "80: completed"])
        XCTAssertEqual(resumed, ["100: 3", "100: completed"], "stopped while they ran, the ops run again")
        _ = try timedOutputs(text, stoppedAt: 90)
        let states = (lastSnapshot?.objectValue ?? JSONObject()).map { "\($0.1)" }
        XCTAssertTrue(
            states.contains { $0.contains("\"running\":[]") } && !states.contains { $0.contains("\"running\":[[") },
            "the state read after the end holds no window still running: \(states)")
    }

    func testZipKeepsEachStreamsElementsWaitingForAPartner() throws {
        let text = PipelineHarness.zippedStreams
        try assertResumesAsOneRun(
            text, stoppedAt: [12, 18, 35, 45, 55], writes: ["15: [\"a\",1]", "50: [\"b\",2]", "60: completed"])
    }

    func testDedupeKeepsTheKeysItRemembersWithTheirAges() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 20ms, next: b }, { at: 30ms, next: a }, { at: 45ms, next: c }, { at: 70ms, next: a }, { at: 75ms, next: b }, { at: 90ms, complete: true }] }
            ops:
              - dedupe: { ttl: 50ms, max: 2 }
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [15, 25, 40, 60, 72],
            writes: ["10: \"a\"", "20: \"b\"", "45: \"c\"", "70: \"a\"", "75: \"b\"", "90: completed"])
    }

    func testGroupByKeepsEachOpenGroupWithItsOpsState() throws {
        // A scan per key, and a debounce per key whose pending element must still come out when no
        // later element of its key arrives after the restore.
        let text = """
            source: { events: [{ at: 10ms, next: { k: a, v: 1 } }, { at: 20ms, next: { k: b, v: 10 } }, { at: 30ms, next: { k: a, v: 2 } }, { at: 40ms, next: { k: b, v: 20 } }, { at: 50ms, next: { k: a, v: 3 } }, { at: 100ms, complete: true }] }
            ops:
              - groupBy:
                  key: .k
                  ops: [{ scan: { seed: 0, accumulator: acc + .v } }, { debounce: 15ms }, { map: "{k: ., n: 1}" }]
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [15, 25, 35, 45, 60],
            writes: [
                "25: {\"k\":1,\"n\":1}", "35: {\"k\":10,\"n\":1}", "45: {\"k\":3,\"n\":1}",
                "55: {\"k\":30,\"n\":1}", "65: {\"k\":6,\"n\":1}", "100: completed",
            ])
    }

    func testAGroupClosedBeforeTheCheckpointStartsAfreshAndAnIdleOneKeepsItsQuietTime() throws {
        let text = """
            source: { events: [{ at: 10ms, next: { k: a, v: 1 } }, { at: 20ms, next: { k: b, v: 10 } }, { at: 30ms, next: { k: a, v: 2 } }, { at: 70ms, next: { k: a, v: 4 } }, { at: 75ms, next: { k: b, v: 20 } }, { at: 90ms, complete: true }] }
            ops:
              - groupBy:
                  key: .k
                  idle: 25ms
                  ops: [{ scan: { seed: 0, accumulator: acc + .v } }]
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [15, 25, 40, 50, 60, 72],
            writes: ["10: 1", "20: 10", "30: 3", "70: 4", "75: 20", "90: completed"])
        XCTAssertEqual(lastSnapshot?.description.contains("[1] ops#0 scan"), false, "closed groups are forgotten")
    }

    func testAGroupWithinAGroupIsForgottenWhenItCloses() throws {
        let text = """
            source: { events: [{ at: 10ms, next: { k: a, v: 1 } }, { at: 20ms, next: { k: a, v: 2 } }, { at: 60ms, next: { k: a, v: 1 } }, { at: 90ms, complete: true }] }
            ops:
              - groupBy:
                  key: .k
                  idle: 25ms
                  ops: [{ groupBy: { key: .v, ops: [{ scan: { seed: 0, accumulator: acc + 1 } }] } }]
            sink: record
            """
        // At 50 ms the outer group of a closed (idle), and with it the inner groups of 1 and 2:
        // nothing of them is kept, and a's 1 at 60 ms starts afresh.
        let (whole, resumed) = try timedOutputs(text, stoppedAt: 50)
        XCTAssertEqual(whole, ["10: 1", "20: 1", "60: 1", "90: completed"])
        XCTAssertEqual(resumed, whole)
        let keys: [String] = lastSnapshot?.objectValue.map { $0.map(\.0) } ?? []
        XCTAssertEqual(keys.filter { $0.contains("ops#0 groupBy [") && $0.hasSuffix("scan") }, [], "\(keys)")
    }

    func testSampleKeepsTheLatestElementUntilTheNextTick() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 15ms, next: b }, { at: 45ms, next: c }, { at: 95ms, complete: true }] }
            ops:
              - sample: 20ms
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [12, 17, 30, 50], writes: ["20: \"b\"", "60: \"c\"", "100: completed"])
    }

    func testCombineLatestAndWithLatestFromKeepTheOtherStreamsLatestElement() throws {
        for step in ["combineLatest: [prices]", "withLatestFrom: { stream: prices }"] {
            let text = """
                streams:
                  prices:
                    source: { events: [{ at: 10ms, next: 1 }, { at: 30ms, next: 2 }, { at: 70ms, complete: true }] }
                  main:
                    source: { events: [{ at: 20ms, next: a }, { at: 40ms, next: b }, { at: 50ms, next: c }, { at: 80ms, complete: true }] }
                    ops:
                      - \(step)
                sinks:
                  - { stream: main, record: out }
                """
            for tick in [15, 25, 35, 45, 60] {
                let (whole, resumed) = try timedOutputs(text, stoppedAt: tick)
                XCTAssertEqual(whole.count, step.hasPrefix("combine") ? 5 : 4, "\(whole)")
                XCTAssertEqual(resumed, whole, "\(step) stopped at \(tick)")
            }
        }
    }

    func testConcatMapRunsAgainTheInnersItWasRunningOrHoldingAfterARestore() throws {
        let text = """
            source: { events: [{ at: 10ms, next: 1 }, { at: 20ms, next: 2 }, { at: 60ms, complete: true }] }
            ops:
              - concatMap:
                  source: { events: { timeline: "{{ [{at: '10ms', next: . * 10}, {at: '20ms', next: . * 100}, {at: '20ms', complete: true}] }}" } }
            sink: record
            """
        let (whole, resumed) = try timedOutputs(text, stoppedAt: 25)
        XCTAssertEqual(whole, ["20: 10", "30: 100", "40: 20", "50: 200", "60: completed"])
        // 1's inner was running and 2 waiting: both run again, 1's first element comes twice.
        XCTAssertEqual(resumed, ["20: 10", "35: 10", "45: 100", "55: 20", "65: 200", "65: completed"])
        XCTAssertEqual(lastSnapshot?["main#0 concatMap"], [1, 2])
        // Stopped with nothing running, nothing runs again.
        let (_, idle) = try timedOutputs(text, stoppedAt: 55)
        XCTAssertEqual(idle, whole)
    }

    func testFlatMapLatestAndActionRunAgainOnlyTheWorkThatWasRunning() throws {
        for step in ["flatMapLatest", "action"] {
            let text = """
                source: { events: [{ at: 10ms, next: 1 }, { at: 15ms, next: 2 }, { at: 40ms, next: 3 }, { at: 90ms, complete: true }] }
                ops:
                  - \(step):
                      source: { events: { timeline: "{{ [{at: '10ms', next: . * 10}, {at: '20ms', complete: true}] }}" } }
                sink: record
                """
            // Stopped at 12 ms, 1's work runs: it runs again from the restart, and is done before 3
            // comes (an action still running then would refuse it).
            let (whole, resumed) = try timedOutputs(text, stoppedAt: 12)
            XCTAssertEqual(lastSnapshot?["main#0 \(step)"], [1], step)
            XCTAssertEqual(resumed.filter { $0.hasPrefix("5") }, whole.filter { $0.hasPrefix("5") }, step)
            XCTAssertEqual(resumed.last, "90: completed", step)
        }
    }

    func testTimerGoesOnWithTheTimeLeftUntilItsNextElement() throws {
        let text = "source: { timer: { dueTime: 30ms, period: 20ms } }\nops:\n  - take: 4\nsink: record"
        try assertResumesAsOneRun(
            text, stoppedAt: [10, 35, 55], writes: ["30: 0", "50: 1", "70: 2", "90: 3", "90: completed"])
    }

    func testBufferKeepsItsListAndTheTimeLeftInItsWindow() throws {
        let text = """
            source: { events: [{ at: 10ms, next: 1 }, { at: 20ms, next: 2 }, { at: 35ms, next: 3 }, { at: 36ms, next: 4 }, { at: 37ms, next: 5 }, { at: 70ms, complete: true }] }
            ops:
              - buffer: { timeSpan: 30ms, count: 2 }
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [15, 25, 36, 50], writes: ["20: [1,2]", "36: [3,4]", "66: [5]", "70: []", "70: completed"])
    }

    func testThrottleKeepsItsWindowAndTheElementWaitingForItsEnd() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 15ms, next: b }, { at: 18ms, next: c }, { at: 45ms, next: d }, { at: 50ms, complete: true }] }
            ops:
              - throttle: 20ms
            sink: record
            """
        try assertResumesAsOneRun(
            text, stoppedAt: [12, 16, 25, 47], writes: ["10: \"a\"", "30: \"c\"", "50: \"d\"", "50: completed"])
    }

    func testEventsGoOnWithTheNextEntryAtItsOwnTime() throws {
        let text = """
            source: { events: [{ at: 10ms, next: a }, { at: 20ms, next: b }, { at: 30ms, next: c }, { at: 40ms, complete: true }] }
            sink: record
            """
        let first = PipelineHarness()
        var snapshot: Value?
        let taking = Checkpoints(restored: [:], interval: .seconds(1), scheduler: first.scheduler) { snapshot = $0 }
        try first.run(text, until: 25, services: [taking])
        taking.checkpoint()
        XCTAssertEqual(snapshot, ["main#source events": ["emitted": 2, "elapsed": 25_000_000]])
        let second = PipelineHarness()
        let resuming = Checkpoints(
            restored: ["main#source events": ["emitted": 2, "elapsed": 25_000_000]], interval: .seconds(1),
            scheduler: second.scheduler
        ) { _ in }
        try second.run(text, services: [resuming])
        XCTAssertEqual(second.events(), ["5: \"c\"", "15: completed"], "as if no time had passed while it was down")
    }

    func testIntervalCountsOnFromItsCountAtItsOwnTimes() throws {
        let text = "source: { interval: 10ms }\nops:\n  - take: 5\nsink: record"
        try assertResumesAsOneRun(
            text, stoppedAt: [5, 25, 38], writes: ["10: 0", "20: 1", "30: 2", "40: 3", "50: 4", "50: completed"])
    }

    func testFixtureGoesOnFromTheElementAndTheLineItReached() throws {
        let folder = NSTemporaryDirectory() + "rivulet-checkpoint-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "{\"n\":1}\n{\"n\":2}\n\n{\"n\":3}\n{\"n\":4}\n".write(
            toFile: folder + "/items.jsonl", atomically: true, encoding: .utf8)
        try "[1, 2, 3, 4]".write(toFile: folder + "/items.json", atomically: true, encoding: .utf8)
        for file in ["items.jsonl", "items.json"] {
            let text = "source: { fixture: { path: \(folder)/\(file), every: 10ms } }\nsink: record"
            try assertResumes(text, stoppedAt: 25)
        }
    }

    func testAComponentWithoutCheckpointsIsRefusedAtItsLine() throws {
        let text = """
            source: { interval: 10ms }
            ops:
              - map: . * 2
              - groupBy: { key: . % 3, ops: [{ take: { for: 1s } }] }
              - take: { for: 1s }
            sink: { file: out.json }
            """
        let loaded = PipelineLoader(registry: PipelineHarness().registry(), environment: [:]).load(
            text: text, path: "p.yaml")
        XCTAssertNotNil(loaded.pipeline, "valid without --state")
        let checked = loaded.checkingCheckpoints()
        XCTAssertNil(checked.pipeline)
        XCTAssertEqual(
            checked.diagnostics.map { "\($0.location.line):\($0.location.column): \($0.message)" },
            [
                "4:5: 'groupBy' cannot be checkpointed: its ops use 'take', which cannot be checkpointed: "
                    + "'take: {for: …}' counts time from subscription, which a restart cannot resume",
                "5:5: 'take' cannot be checkpointed: 'take: {for: …}' counts time from subscription, which a restart cannot resume",
                "6:9: 'file' cannot be checkpointed: a JSON document is written whole when the run ends; write JSON Lines or CSV",
            ])
    }

    func testTheShapeNamesEveryComponentAndAChangeIsSaidInWords() throws {
        let loader = PipelineLoader(registry: PipelineHarness().registry(), environment: [:])
        let before = try XCTUnwrap(
            loader.load(text: "source: { interval: 1s }\nops:\n  - map: .\nsink: record", path: "p.yaml").pipeline)
        let after = try XCTUnwrap(
            loader.load(text: "source: { interval: 2s }\nops:\n  - filter: .\nsink: record", path: "p.yaml").pipeline)
        let shape = CheckpointPlan.shape(of: before)
        XCTAssertEqual(shape, ["main#source interval", "main#0 map", "sink#0 record <- main"])
        XCTAssertNil(CheckpointPlan.difference(saved: shape, now: shape), "a parameter change keeps the shape")
        XCTAssertEqual(
            CheckpointPlan.difference(saved: shape, now: CheckpointPlan.shape(of: after)),
            "'main#0 map' is now 'main#0 filter'")
        XCTAssertEqual(
            CheckpointPlan.difference(saved: shape, now: Array(shape.prefix(2))), "'sink#0 record <- main' was removed")
    }

    func testTheShapeKeepsTheParametersAnOperatorsStateDependsOnAsWritten() throws {
        let loader = PipelineLoader(registry: PipelineHarness().registry(), environment: [:])
        func pipeline(_ ops: String) throws -> ValidatedPipeline {
            try XCTUnwrap(
                loader.load(text: "source: { interval: 1s }\nops:\n\(ops)\nsink: record", path: "p.yaml").pipeline)
        }
        let short = try pipeline("  - buffer: 1s")
        XCTAssertEqual(CheckpointPlan.shape(of: short)[1], "main#0 buffer {timeSpan: 1s}")
        let laidOut = try pipeline("  - buffer:\n      timeSpan: 1s\n      count: 5")
        XCTAssertEqual(CheckpointPlan.shape(of: laidOut)[1], "main#0 buffer {timeSpan: 1s, count: 5}")
        let longer = try pipeline("  - buffer: { timeSpan: 2s, count: 5 }")
        let difference = try XCTUnwrap(CheckpointPlan.difference(saved: CheckpointPlan.shape(of: laidOut), now: longer))
        XCTAssertEqual(
            difference.text, "'main#0 buffer {timeSpan: 1s, count: 5}' is now 'main#0 buffer {timeSpan: 2s, count: 5}'")
        XCTAssertEqual(difference.location?.description, "p.yaml:3:5")
        XCTAssertNil(
            CheckpointPlan.difference(
                saved: CheckpointPlan.shape(of: laidOut), now: try pipeline("  - buffer: { timeSpan: 1s, count: 5 }")),
            "the same values, laid out otherwise")
    }

    /// Canned answers on the virtual clock, each taking `delay`: (path, query, headers, body).
    private func answers(_ exchanges: [(String, [String: String], [String: String], String)], delay: Int = 10)
        -> HTTPSession
    {
        HTTPSession(
            mode: .canned(
                exchanges.map { path, query, headers, body in
                    CannedHTTPExchange(
                        method: "GET", path: path, query: query, status: 200, headers: headers, body: Array(body.utf8),
                        delay: .milliseconds(delay))
                }))
    }

    func testAnHTTPSourceFetchesThePageItWasWaitingForAgainAndNoneBefore() throws {
        let pages: [(String, [String: String], [String: String], String)] = [
            ("/items", ["page": "1"], [:], "[1, 2]"), ("/items", ["page": "2"], [:], "[3]"),
            ("/items", ["page": "3"], [:], "[4, 5]"), ("/items", ["page": "4"], [:], "[]"),
        ]
        let text = """
            source: { http: { url: "http://api.test/items", query: { api_key: "k-123" }, paginate: page } }
            sink: record
            """
        // Stopped at 25 ms, page 3 is in flight: the resumed run is answered only from page 3 on,
        // so asking for page 1 or 2 again would fail it.
        let (whole, resumed) = try outputs(text, stoppedAt: 25) { run in
            [self.answers(run == 2 ? Array(pages.dropFirst(2)) : pages)]
        }
        XCTAssertEqual(whole, ["1", "2", "3", "4", "5", "completed"])
        XCTAssertEqual(resumed, whole)
        let saved = try XCTUnwrap(lastSnapshot?["main#source http"])
        XCTAssertEqual(saved["reader"]?["pages"], 2)
        XCTAssertEqual(saved["reader"]?["next"], "http://api.test/items?api_key=REDACTED&page=3")
    }

    func testAnHTTPSourceThatEmitsEverythingAtTheEndKeepsTheItemsSoFar() throws {
        let pages: [(String, [String: String], [String: String], String)] = [
            ("/items", [:], ["Link": "<http://api.test/items?after=b>; rel=\"next\""], "[\"a\", \"b\"]"),
            ("/items", ["after": "b"], [:], "[\"c\"]"),
        ]
        let text = "source: { http: { url: \"http://api.test/items\", paginate: link, emit: all } }\nsink: record"
        let (whole, resumed) = try outputs(text, stoppedAt: 15) { run in
            [self.answers(run == 2 ? Array(pages.dropFirst()) : pages)]
        }
        XCTAssertEqual(whole, ["[\"a\",\"b\",\"c\"]", "completed"])
        XCTAssertEqual(resumed, whole)
    }

    func testScanPaginateKeepsItsPagesAndFetchesThePageInFlightAgain() throws {
        let pages: [(String, [String: String], [String: String], String)] = [
            ("/items", [:], ["Link": "<http://api.test/items?page=2>; rel=\"next\""], "[1, 2]"),
            ("/items", ["page": "2"], ["Link": "<http://api.test/items?page=3>; rel=\"next\""], "[3]"),
            ("/items", ["page": "3"], [:], "[4]"),
        ]
        let text = """
            source: { events: [{ at: 0ms, next: t }, { at: 20ms, next: t }, { at: 40ms, next: t }, { at: 60ms, next: t }, { at: 70ms, complete: true }] }
            ops:
              - scanPaginate: { http: { url: "http://api.test/items", paginate: link } }
            sink: record
            """
        // Stopped at 5 ms page 1 is in flight, at 25 ms page 2, at 35 ms none: the resumed run is
        // answered from the page in flight (or the next one) on.
        for (tick, done) in [(5, 0), (25, 1), (35, 2)] {
            let (whole, resumed) = try outputs(text, stoppedAt: tick) { run in
                [self.answers(run == 2 ? Array(pages.dropFirst(done)) : pages)]
            }
            XCTAssertEqual(whole, ["[1,2]", "[1,2,3]", "[1,2,3,4]", "completed"], "stopped at \(tick)")
            XCTAssertEqual(resumed, whole, "stopped at \(tick)")
        }
    }

    func testAnHTTPSinkSendsAgainTheRequestsNotAnsweredAtTheCheckpointAndNoOther() throws {
        let text = """
            source: { events: [{ at: 10ms, next: 1 }, { at: 12ms, next: 2 }, { at: 14ms, next: 3 }, { at: 50ms, complete: true }] }
            sink: { http: { url: "http://api.test/items/{{ . }}" } }
            """
        func posts(_ items: [Int]) -> HTTPSession {
            HTTPSession(
                mode: .canned(
                    items.map {
                        CannedHTTPExchange(
                            method: "POST", path: "/items/\($0)", query: [:], status: 200, headers: [:], body: [],
                            delay: .milliseconds(10))
                    }))
        }
        // Stopped at 25 ms: 1 was answered, 2 is in flight and 3 waits behind it.
        let sessions = [posts([1, 2, 3]), posts([1, 2, 3]), posts([2, 3])]
        _ = try outputs(text, stoppedAt: 25) { [sessions[$0]] }
        XCTAssertEqual(sessions[1].requests.entries.map(\.line), ["POST /items/1", "POST /items/2"])
        XCTAssertEqual(sessions[2].requests.entries.map(\.line), ["POST /items/2", "POST /items/3"])
        XCTAssertEqual(
            sessions[2].requests.entries.map(\.outcome),
            [.answered(.milliseconds(10), status: 200), .answered(.milliseconds(20), status: 200)])
    }

    func testASourceInsideAnotherComponentIsReadAfreshForEachPage() throws {
        let text = """
            source: { events: [{ at: 0ms, next: 1 }, { at: 50ms, next: 2 }, { at: 100ms, complete: true }] }
            ops:
              - scanPaginate: { events: { marbles: "-a-b|" } }
            sink: record
            """
        // Stopped with the second page half read: it is read again from its start.
        let (whole, resumed) = try outputs(text, stoppedAt: 73)
        XCTAssertEqual(whole, ["[\"a\",\"b\"]", "[\"a\",\"b\",\"a\",\"b\"]", "completed"])
        XCTAssertEqual(resumed, whole)
    }

    func testSecretQueryValuesStayOutOfAPositionAndComeBackFromTheFirstRequest() {
        let given = [URLQueryItem(name: "api-key", value: "k%2B1"), URLQueryItem(name: "q", value: "a")]
        let saved = HTTPPageReader.removingSecrets(
            from: "http://h.test/s?q=a&api-key=k%2B1&page=3&token=server", given: given)
        XCTAssertEqual(saved, "http://h.test/s?q=a&api-key=REDACTED&page=3&token=server")
        XCTAssertEqual(
            HTTPPageReader.restoringSecrets(in: saved, from: "http://h.test/s?api-key=k%2B1&q=a"),
            "http://h.test/s?q=a&api-key=k%2B1&page=3&token=server")
    }
}
