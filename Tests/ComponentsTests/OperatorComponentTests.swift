import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

final class OperatorComponentTests: LeakCheckingTestCase {
    func testSearchAsYouTypeFiltersDebouncesAndDeduplicates() throws {
        let harness = try PipelineHarness().run(
            """
            source:
              events:
                - { at: 0ms, next: "cl" }
                - { at: 150ms, next: "clim" }
                - { at: 300ms, next: "climate" }
                - { at: 1000ms, next: "climate" }
                - { at: 1100ms, next: "weather" }
                - { at: 2000ms, complete: true }
            ops:
              - filter: len(.) >= 3
              - debounce: 500ms
              - distinctUntilChanged
              - map: { q: ., n: len(.) }
            sink: record
            """)
        XCTAssertEqual(
            harness.events(),
            ["800: {\"q\":\"climate\",\"n\":7}", "1600: {\"q\":\"weather\",\"n\":7}", "2000: completed"])
        XCTAssertEqual(harness.recorders["out"]?.closed, 1)
        guard case .completed? = harness.outcome else { return XCTFail("\(String(describing: harness.outcome))") }
    }

    func testFlatMapLatestDropsTheOldInnerAndReportsExecuting() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              typed:
                source:
                  events:
                    - { at: 0ms, next: { q: a, events: [{ at: 100ms, next: A1 }, { at: 300ms, next: A2 }, { at: 400ms, complete: true }] } }
                    - { at: 200ms, next: { q: b, events: [{ at: 50ms, next: B1 }, { at: 100ms, complete: true }] } }
                    - { at: 500ms, complete: true }
                ops:
                  - flatMapLatest: { events: { timeline: "{{ .events }}" } }
            sinks:
              - { stream: typed, record: results }
              - { stream: typed.executing, record: loading }
            """)
        XCTAssertEqual(harness.events("results"), ["100: \"A1\"", "250: \"B1\"", "500: completed"])
        XCTAssertEqual(
            harness.events("loading"), ["0: true", "300: false", "500: completed"], "ends with its operator")
    }

    func testCombineKeepsTheElementBesideEachResultOfItsInner() throws {
        for operation in ["flatMap", "concatMap", "flatMapLatest"] {
            let harness = try PipelineHarness().run(
                """
                streams:
                  orders:
                    source:
                      events:
                        - { at: 0ms, next: { id: 1, events: [{ at: 10ms, next: { n: a } }, { at: 20ms, next: { n: b } }, { at: 30ms, complete: true }] } }
                        - { at: 100ms, next: { id: 2, events: [{ at: 10ms, next: { n: c } }, { at: 10ms, complete: true }] } }
                        - { at: 200ms, complete: true }
                    ops:
                      - \(operation): { source: { events: { timeline: "{{ .events }}" } }, combine: "{id: .value.id, n: .result.n}" }
                sinks:
                  - { stream: orders, record: results }
                """)
            XCTAssertEqual(
                harness.events("results"),
                [
                    "10: {\"id\":1,\"n\":\"a\"}", "20: {\"id\":1,\"n\":\"b\"}", "110: {\"id\":2,\"n\":\"c\"}",
                    "200: completed",
                ], operation)
        }
    }

    func testAnErrorInCombineIsTheInnersFailure() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              orders:
                source: { events: [{ at: 0ms, next: 1 }, { at: 10ms, next: 2 }, { at: 20ms, complete: true }] }
                ops:
                  - id: lookup
                    concatMap: { source: { events: [{ at: 1ms, next: 5 }, { at: 1ms, complete: true }] }, combine: "10 / (.value - 1)", onError: skip }
            sinks:
              - { stream: orders, record: results }
              - { stream: lookup.errors, record: errors }
            """)
        XCTAssertEqual(harness.events("results"), ["11: 10", "20: completed"])
        XCTAssertEqual(harness.events("errors").count, 2, harness.events("errors").joined(separator: "\n"))
    }

    func testInnerErrorsGoToTheErrorsSideStreamUnderSkip() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              requests:
                source: { events: [{ at: 0ms, next: ok }, { at: 10ms, next: bad }, { at: 20ms, next: ok2 }, { at: 30ms, complete: true }] }
                ops:
                  - id: fetch
                    concatMap:
                      source: { events: { timeline: "{{ . == 'bad' ? [{at: '5ms', error: 'server said no'}] : [{at: '5ms', next: .}, {at: '5ms', complete: true}] }}" } }
                      onError: skip
            sinks:
              - { stream: requests, record: ok }
              - { stream: fetch.errors, record: errors }
            """)
        XCTAssertEqual(harness.events("ok"), ["5: \"ok\"", "25: \"ok2\"", "30: completed"])
        XCTAssertEqual(harness.events("errors").count, 2)
        XCTAssertEqual(harness.events("errors").last, "30: completed")
        XCTAssertTrue(harness.events("errors")[0].contains("server said no"), "\(harness.events("errors"))")
        XCTAssertTrue(harness.events("errors")[0].contains("\"element\":\"bad\""))
    }

    func testInnerErrorFailsThePipelineByDefault() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: 1 }] }
            ops:
              - flatMap: { events: [{ at: 5ms, error: boom }] }
            sink: record
            """)
        XCTAssertEqual(
            harness.events(), ["5: error p.yaml:3:16: error: events: boom"], "the inner source that failed is named")
        guard case .failed? = harness.outcome else { return XCTFail("expected a failure") }
    }

    func testRunTimeExpressionErrorNamesOperatorPlaceAndElement() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: "abc" }, { at: 10ms, next: 42 }] }
            ops:
              - map: len(.)
            sink: record
            """)
        XCTAssertEqual(
            harness.events(),
            [
                "0: 3",
                "10: error p.yaml:3:5: error: map: len() expects a string, list or object, got number 42 in 'len(.)' (element: 42)",
            ])
    }

    func testAFiltersRunTimeErrorNamesTheElementItWasTesting() throws {
        // A filter hands its element into the scope and back; a failed test still reports it.
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: "abcd" }, { at: 10ms, next: 42 }] }
            ops:
              - filter: len(.) > 3
            sink: record
            """)
        XCTAssertEqual(
            harness.events(),
            [
                "0: \"abcd\"",
                "10: error p.yaml:3:5: error: filter: len() expects a string, list or object, got number 42 in 'len(.) > 3' (element: 42)",
            ])
    }

    func testAdjacentMapsAndFiltersRunAsOneStepWithTheResultsOfOneByOne() throws {
        let text = """
            source: { events: [{ at: 0ms, next: 1 }, { at: 5ms, next: 2 }, { at: 10ms, next: 3 }, { at: 20ms, next: 0 }, { at: 30ms, next: 5 }] }
            ops:
              - map: { n: ., half: 6 / . }
              - filter: .n != 2
              - map: .half + .n
              - filter: . > 4
            sink: record
            """
        let fused = try PipelineHarness().run(text)
        // Meters on every operator need the element between each two: nothing is fused.
        let oneByOne = PipelineHarness()
        oneByOne.meters = RunMeters()
        try oneByOne.run(text)
        XCTAssertEqual(fused.events(), oneByOne.events())
        XCTAssertEqual(Array(fused.events().prefix(2)), ["0: 7", "10: 5"])
        XCTAssertTrue(fused.events().last?.contains("p.yaml:3:5: error: map: ") == true, "\(fused.events())")
        XCTAssertEqual(fused.events().count, 3, "the error at 20ms ends the stream: 5 is never read")
    }

    func testAFusedStretchIsOneSinkWhereOperatorsWatchedOneByOneAreOneEach() throws {
        try XCTSkipUnless(Resources.isCounting, "sinks are counted in debug builds")
        let text = """
            source: { interval: 10ms }
            ops:
              - map: . + 1
              - filter: . > 0
              - map: . * 2
              - map: . - 1
            sink: record
            """
        func liveWhileRunning(_ meters: RunMeters?) throws -> (live: Int, events: [String]) {
            let before = Resources.total
            let harness = PipelineHarness()
            harness.meters = meters
            let run = try harness.start(text)
            harness.scheduler.advance(to: 35)
            let live = Resources.total - before
            run.dispose()
            return (live, harness.events())
        }
        let fused = try liveWhileRunning(nil)
        let oneByOne = try liveWhileRunning(RunMeters())
        XCTAssertEqual(fused.events, ["10: 1", "20: 3", "30: 5"])
        XCTAssertEqual(oneByOne.events, fused.events)
        XCTAssertEqual(oneByOne.live - fused.live, 3, "four operators run in one sink instead of four")
    }

    func testAnErrorInsideAFusedStretchNamesItsOwnOperatorAndOnErrorStillHolds() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: "abc" }, { at: 10ms, next: 42 }, { at: 20ms, next: "de" }] }
            ops:
              - filter: . != null
              - map: { onError: skip, expression: "len(.)" }
              - map: . * 10
            sink: record
            """)
        XCTAssertEqual(harness.events(), ["0: 30", "20: 20"], "42 is skipped by the map that failed on it")
        let failing = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: "abc" }, { at: 10ms, next: 42 }] }
            ops:
              - filter: . != null
              - map: len(.)
            sink: record
            """)
        XCTAssertEqual(
            failing.events().last,
            "10: error p.yaml:4:5: error: map: len() expects a string, list or object, got number 42 in 'len(.)' (element: 42)"
        )
    }

    func testScanWithAccumulatorClampsACarouselIndex() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: { marbles: "nnnnpppppp|", tick: 10ms, values: { n: 1, p: -1 } } }
            ops:
              - scan: { seed: 0, accumulator: "clamp(acc + ., 0, 2)" }
            sink: record
            """)
        XCTAssertEqual(
            harness.events(),
            ["0: 1", "10: 2", "20: 2", "30: 2", "40: 1", "50: 0", "60: 0", "70: 0", "80: 0", "90: 0", "100: completed"])
    }

    func testGraphFormWithMergeCombineLatestAndWithLatestFrom() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              items:
                source: { events: [{ at: 0ms, next: [apple, banana, cherry] }] }
              next:
                source: { events: { marbles: "-x-x--|", tick: 10ms } }
                ops: [{ map: 1 }]
              previous:
                source: { events: { marbles: "----x-|", tick: 10ms } }
                ops: [{ map: -1 }]
              index:
                source: { stream: next }
                ops:
                  - merge: [previous]
                  - scan: { seed: 0, accumulator: "clamp(acc + ., 0, 2)" }
              shown:
                source: { stream: index }
                ops:
                  - withLatestFrom: { stream: items, combine: ".latest[.value]" }
              both:
                source: { stream: index }
                ops:
                  - combineLatest: [items]
            sinks:
              - { stream: shown, record: shown }
              - { stream: both, record: both }
            """)
        XCTAssertEqual(
            harness.events("shown"), ["10: \"banana\"", "30: \"cherry\"", "40: \"banana\"", "60: completed"])
        XCTAssertEqual(harness.events("both").first, "10: [1,[\"apple\",\"banana\",\"cherry\"]]")
    }

    func testAStreamWithTwoReadersIsSharedAndBothSeeEverything() throws {
        let harness = PipelineHarness()
        try harness.run(
            """
            streams:
              numbers:
                source: { events: [{ at: 0ms, next: 1 }, { at: 0ms, next: 2 }, { at: 0ms, complete: true }] }
                ops: [{ log: numbers }]
            sinks:
              - { stream: numbers, record: a }
              - { stream: numbers, record: b }
            """)
        XCTAssertEqual(harness.events("a"), ["0: 1", "0: 2", "0: completed"])
        XCTAssertEqual(harness.events("b"), ["0: 1", "0: 2", "0: completed"])
        XCTAssertEqual(
            harness.logged, ["[numbers] 0ms next 1", "[numbers] 0ms next 2", "[numbers] 0ms completed"],
            "one subscription upstream")
    }

    func testTimeBasedOperators() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: { marbles: "ab-c-----d|", tick: 100ms } }
            ops:
              - throttle: { dueTime: 250ms, latest: false }
              - delay: 50ms
              - startWith: start
              - take: 4
            sink: record
            """)
        XCTAssertEqual(harness.events(), ["0: \"start\"", "50: \"a\"", "350: \"c\"", "950: \"d\"", "950: completed"])
    }

    func testBufferTimeoutRetryAndCatch() throws {
        let buffered = try PipelineHarness().run(
            "source: { events: { marbles: \"abc-d|\", tick: 100ms } }\nops: [{ buffer: { timeSpan: 250ms, count: 2 } }]\nsink: record\n"
        )
        XCTAssertEqual(buffered.events(), ["100: [\"a\",\"b\"]", "350: [\"c\"]", "500: [\"d\"]", "500: completed"])

        let timedOut = try PipelineHarness().run(
            "source: { events: { marbles: \"a----b\", tick: 100ms } }\nops: [{ timeout: 300ms }, { catchAndReturn: gave up }]\nsink: record\n"
        )
        XCTAssertEqual(timedOut.events(), ["0: \"a\"", "300: \"gave up\"", "300: completed"])

        let retried = try PipelineHarness().run(
            "source: { events: { marbles: \"a#\", tick: 100ms } }\nops: [{ retry: 3 }, { catch: { events: [{ at: 0ms, next: \"{{ .message }}\" }] } }]\nsink: record\n"
        )
        XCTAssertEqual(retried.events().prefix(3), ["0: \"a\"", "100: \"a\"", "200: \"a\""])
        XCTAssertEqual(retried.events().count, 4)
    }

    func testTakeWhileAndTakeUntilWithExpressionsAndAStream() throws {
        let source =
            "source: { events: { marbles: \"abcde|\", tick: 10ms, values: { a: 1, b: 2, c: 3, d: 4, e: 5 } } }\n"
        let exclusive = try PipelineHarness().run(source + "ops: [{ takeWhile: . < 3 }]\nsink: record\n")
        XCTAssertEqual(exclusive.events(), ["0: 1", "10: 2", "20: completed"])
        let inclusive = try PipelineHarness().run(
            source + "ops: [{ takeWhile: { expression: . < 3, inclusive: true } }]\nsink: record\n")
        XCTAssertEqual(inclusive.events(), ["0: 1", "10: 2", "20: 3", "20: completed"])
        let until = try PipelineHarness().run(source + "ops: [{ takeUntil: { expression: . >= 4 } }]\nsink: record\n")
        XCTAssertEqual(until.events(), ["0: 1", "10: 2", "20: 3", "30: completed"])
        let stopped = try PipelineHarness().run(
            """
            streams:
              numbers:
                source: { events: { marbles: "abcde|", tick: 10ms } }
                ops: [{ takeUntil: stop }]
              stop:
                source: { events: [{ at: 25ms, next: now }] }
            sinks:
              - { stream: numbers, record: out }
            """)
        XCTAssertEqual(stopped.events(), ["0: \"a\"", "10: \"b\"", "20: \"c\"", "25: completed"])
    }

    func testDistinctUntilChangedComparesAsExpressionsDo() throws {
        // 1 and 1.0 are equal in expressions, also inside lists and objects; so they are here.
        let harness = try PipelineHarness().run(
            "source: { events: [{ at: 0ms, next: [1, {a: 2}] }, { at: 1ms, next: [1.0, {a: 2.0}] }, { at: 2ms, next: [2] }] }\n"
                + "ops: [distinctUntilChanged]\nsink: record\n")
        XCTAssertEqual(harness.events(), ["0: [1,{\"a\":2}]", "2: [2]"])
    }

    func testHotTimelinesCountFromTheStartOfThePipeline() throws {
        // The inner source starts at 100 ms; hot, its entry at 150 ms comes 50 ms later and the one
        // at 50 ms (already past) never comes; cold, both are counted from 100 ms.
        let timeline = "[{ at: 50ms, next: early }, { at: 150ms, next: late }, { at: 200ms, complete: true }]"
        let hot = try PipelineHarness().run(
            "source: { events: [{ at: 100ms, next: go }] }\nops: [{ flatMap: { events: { events: \(timeline), hot: true } } }]\nsink: record\n"
        )
        XCTAssertEqual(hot.events().prefix(1), ["150: \"late\""])
        let cold = try PipelineHarness().run(
            "source: { events: [{ at: 100ms, next: go }] }\nops: [{ flatMap: { events: \(timeline) } }]\nsink: record\n"
        )
        XCTAssertEqual(cold.events().prefix(2), ["150: \"early\"", "250: \"late\""])
    }

    func testRetryWithBackoffWaitsGrowingDelays() throws {
        let harness = try PipelineHarness().run(
            "source: { events: { marbles: \"a#\", tick: 10ms } }\nops: [{ retry: { max: 3, backoff: 100ms, jitter: 0 } }]\nsink: record\n"
        )
        // Attempts at 0, 110 (10 + 100) and 320 (120 + 200); each fails 10 ms in.
        XCTAssertEqual(harness.events().map { $0.prefix(while: { $0 != ":" }) }, ["0", "110", "320", "330"])
        XCTAssertTrue(harness.events().last?.contains("error in marbles") == true, "\(harness.events())")
    }

    func testTimerOnceAndPeriodic() throws {
        XCTAssertEqual(
            try PipelineHarness().run("source: { timer: 2s }\nsink: record\n").events(), ["2000: 0", "2000: completed"])
        let periodic = try PipelineHarness().run(
            "source: { timer: { dueTime: 1s, period: 500ms } }\nops: [{ take: 3 }]\nsink: record\n")
        XCTAssertEqual(periodic.events(), ["1000: 0", "1500: 1", "2000: 2", "2000: completed"])
    }

    func testRandomIsRepeatableUnderASeed() throws {
        let text = "source: { events: { marbles: \"xxxxx|\" } }\nops: [{ map: \"random(1, 100)\" }]\nsink: record\n"
        let first = try PipelineHarness().run(text, seed: 9).events()
        let second = try PipelineHarness().run(text, seed: 9).events()
        let other = try PipelineHarness().run(text, seed: 10).events()
        XCTAssertEqual(first, second)
        XCTAssertNotEqual(first, other)
    }

    func testDisposingARunClosesEverySinkOnce() throws {
        let harness = PipelineHarness()
        try harness.run("source: { interval: 1s }\nsinks: [record, { record: second }]\n", until: 3500)
        XCTAssertEqual(harness.events().count, 3)
        XCTAssertEqual(harness.recorders["out"]?.closed, 1)
        XCTAssertEqual(harness.recorders["second"]?.closed, 1)
        guard case .cancelled? = harness.outcome else { return XCTFail("expected cancellation") }
    }
}
