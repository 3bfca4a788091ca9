import Components
@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

/// The aggregation operators in pipelines, on the virtual clock: window boundaries, sliding and
/// session windows, dedupe's time to live and bound, reduce, zip and sample.
final class AggregationComponentTests: LeakCheckingTestCase {
    private func run(_ ops: String, _ events: String) throws -> [String] {
        try PipelineHarness().run("source: { events: \(events) }\nops:\n\(ops)\nsink: record").events()
    }

    /// A timeline of `values` at `times` (ms), completing at `end`.
    private func timeline(_ entries: [(Int, String)], end: Int) -> String {
        "[" + entries.map { "{ at: \($0.0)ms, next: \($0.1) }" }.joined(separator: ", ")
            + ", { at: \(end)ms, complete: true }]"
    }

    func testATumblingWindowTakesAnElementOnItsBoundaryIntoTheNextWindow() throws {
        let events = timeline([(0, "1"), (50, "2"), (100, "3"), (150, "4"), (200, "5"), (450, "6")], end: 470)
        XCTAssertEqual(
            try run("  - window: 100ms", events),
            ["100: [1,2]", "200: [3,4]", "300: [5]", "470: [6]", "470: completed"],
            "the element at 100 opens the second window; no empty windows while idle")
    }

    func testCountClosesAWindowEarlyAndTheRestOfItsPeriodIsANewOne() throws {
        let events = timeline([(10, "1"), (20, "2"), (30, "3"), (40, "4"), (120, "5")], end: 130)
        XCTAssertEqual(
            try run("  - window: { every: 100ms, count: 2 }", events),
            ["20: [1,2]", "40: [3,4]", "130: [5]", "130: completed"])
        XCTAssertEqual(
            try run("  - window: { count: 2 }", events), ["20: [1,2]", "40: [3,4]", "130: [5]", "130: completed"])
    }

    func testSlidingWindowsOverlap() throws {
        let events = timeline([(10, "1"), (60, "2"), (110, "3")], end: 300)
        XCTAssertEqual(
            try run("  - window: { every: 100ms, slide: 50ms }", events),
            ["100: [1,2]", "150: [2,3]", "200: [3]", "300: completed"])
    }

    func testASessionClosesAfterItsGapAndAnElementExactlyAtTheGapStartsANewOne() throws {
        let events = timeline([(0, "1"), (20, "2"), (50, "3"), (100, "4"), (110, "5")], end: 500)
        XCTAssertEqual(
            try run("  - window: { sessionGap: 50ms }", events),
            ["100: [1,2,3]", "160: [4,5]", "500: completed"])
    }

    func testAnErrorDiscardsTheOpenWindowAndBadShapesAreRefused() throws {
        let events = "[{ at: 10ms, next: 1 }, { at: 20ms, error: boom }]"
        let failed = try run("  - window: 100ms", events)
        XCTAssertEqual(failed.count, 1)
        XCTAssertTrue(failed[0].hasPrefix("20: error ") && failed[0].hasSuffix("boom"), "\(failed)")
        XCTAssertThrowsError(try run("  - window: { slide: 10ms }", events)) { error in
            XCTAssertTrue("\(error)".contains("slide needs every"), "\(error)")
        }
        XCTAssertThrowsError(try run("  - window: { every: 10ms, sessionGap: 1s }", events))
        XCTAssertThrowsError(try run("  - window: { every: 10ms, slide: 20ms }", events))
    }

    func testReduceEmitsOneTotalAtCompletion() throws {
        let events = timeline([(10, "{ bytes: 3 }"), (20, "{ bytes: 4 }")], end: 30)
        XCTAssertEqual(
            try run("  - reduce: { seed: 0, accumulator: acc + .bytes }", events), ["30: 7", "30: completed"])
        XCTAssertEqual(
            try run("  - reduce: { seed: 5, accumulator: acc + . }", "[{ at: 5ms, complete: true }]"),
            [
                "5: 5", "5: completed",
            ])
    }

    func testDedupeRemembersEachKeyForItsTimeToLiveAndWithinItsBound() throws {
        let events = timeline(
            [(0, "{ id: a }"), (10, "{ id: b }"), (20, "{ id: a }"), (100, "{ id: a }"), (110, "{ id: c }")], end: 120)
        XCTAssertEqual(
            try run("  - dedupe: { key: .id, ttl: 100ms }\n  - map: .id", events),
            ["0: \"a\"", "10: \"b\"", "100: \"a\"", "110: \"c\"", "120: completed"])
        XCTAssertEqual(
            try run("  - dedupe: .id\n  - map: .id", events), ["0: \"a\"", "10: \"b\"", "110: \"c\"", "120: completed"])
        let cycling = timeline([(0, "1"), (1, "2"), (2, "3"), (3, "1"), (4, "3")], end: 5)
        XCTAssertEqual(
            try run("  - dedupe: { max: 2 }", cycling), ["0: 1", "1: 2", "2: 3", "3: 1", "5: completed"],
            "with two keys remembered, 1 was forgotten when 3 came")
    }

    func testSampleTakesTheLatestEachPeriodOrFromAStream() throws {
        let events = timeline([(10, "1"), (20, "2"), (130, "3"), (350, "4")], end: 380)
        XCTAssertEqual(try run("  - sample: 100ms", events), ["100: 2", "200: 3", "400: 4", "400: completed"])
        XCTAssertEqual(
            try run("  - sample: { every: 100ms, default: 0 }", events),
            ["100: 2", "200: 3", "300: 0", "400: 4", "400: completed"])
        XCTAssertThrowsError(try run("  - sample: { default: 0 }", events))
    }

    func testZipPairsStreamsByPosition() throws {
        let harness = try PipelineHarness().run(PipelineHarness.zippedStreams)
        XCTAssertEqual(harness.events(), ["15: [\"a\",1]", "50: [\"b\",2]", "60: completed"])
    }

    func testAggregateSummarisesEachKeyPerWindowOnTheClockOrByEventTime() throws {
        let events = timeline(
            [
                (0, "{ s: api, ms: 10, b: 100, ts: 1000 }"), (10, "{ s: web, ms: 30, b: 50, ts: 30000 }"),
                (20, "{ s: api, ms: 20, b: null, ts: 59999 }"), (30, "{ s: api, ms: 5, b: 1, ts: 60000 }"),
            ], end: 100)
        let fields =
            "fields: { n: count, bytes: { sum: .b }, slowest: { max: .ms }, mean: { avg: .ms }, last: { last: .ms } }"
        XCTAssertEqual(
            try run("  - aggregate: { by: .s, every: 1m, time: .ts, \(fields) }", events),
            [
                "30: {\"key\":\"api\",\"start\":0,\"n\":2,\"bytes\":100,\"slowest\":20,\"mean\":15.0,\"last\":20}",
                "30: {\"key\":\"web\",\"start\":0,\"n\":1,\"bytes\":50,\"slowest\":30,\"mean\":30.0,\"last\":30}",
                "100: {\"key\":\"api\",\"start\":60000,\"n\":1,\"bytes\":1,\"slowest\":5,\"mean\":5.0,\"last\":5}",
                "100: completed",
            ], "an element of a later event-time window closes the window; an element at 60000 opens the next")
        XCTAssertEqual(
            try run("  - aggregate: { every: 25ms, fields: { n: count } }", events),
            ["25: {\"start\":0,\"n\":3}", "50: {\"start\":25,\"n\":1}", "100: completed"],
            "on the clock, a window closes at its end; without by, one group")
        XCTAssertThrowsError(try run("  - aggregate: { fields: { n: { median: .ms } } }", events)) { error in
            XCTAssertTrue("\(error)".contains("field 'n': write count, or one of"), "\(error)")
        }
        XCTAssertThrowsError(try run("  - aggregate: { time: .ts, fields: { n: count } }", events))
    }

    /// A field named `key` or `start` gives that member its value, in the member's place.
    func testAFieldNamedAsAnObjectsOwnMemberTakesItsPlace() throws {
        let events = timeline([(0, "{ s: api, ms: 10 }"), (10, "{ s: api, ms: 30 }")], end: 100)
        XCTAssertEqual(
            try run(
                "  - aggregate: { by: .s, every: 50ms, fields: { n: count, start: { max: .ms }, key: count } }", events),
            ["50: {\"key\":2,\"start\":30,\"n\":2}", "100: completed"])
    }

    func testGroupByRunsAChainPerKeyAndClosesIdleGroups() throws {
        let events = timeline(
            [(0, "{ u: a, n: 1 }"), (10, "{ u: b, n: 2 }"), (20, "{ u: a, n: 3 }"), (200, "{ u: a, n: 4 }")], end: 300)
        XCTAssertEqual(
            try run(
                "  - groupBy: { key: .u, idle: 100ms, ops: [{ reduce: { seed: 0, accumulator: acc + .n } }] }", events),
            ["110: 2", "120: 4", "300: 4", "300: completed"],
            "b idles out at 110, a at 120; a opens again at 200 and closes with the stream")
        XCTAssertEqual(
            try run(
                "  - groupBy: { key: .u, maxGroups: 1, ops: [{ reduce: { seed: 0, accumulator: acc + .n } }] }", events),
            ["10: 1", "20: 2", "300: 7", "300: completed"], "one group open at a time: the idlest is closed")
    }

    func testGroupByWithManyKeysKeepsItsBoundAndWindowsInsideGroups() throws {
        let entries = (0..<2000).map { (index: Int) in (index, "{ k: \(index % 500), n: 1 }") }
        let counts = try run(
            "  - groupBy: { key: .k, maxGroups: 100, ops: [{ window: 1s }, { map: len(.) }] }\n  - reduce: { seed: 0, accumulator: acc + . }",
            timeline(entries, end: 2500))
        XCTAssertEqual(counts, ["2500: 2000", "2500: completed"], "every element counted once, whatever the bound")
        let windows = try run(
            "  - groupBy: { key: .u, ops: [{ window: 100ms }, { map: \"{u: .[0].u, n: len(.)}\" }] }",
            timeline([(0, "{ u: a }"), (10, "{ u: b }"), (20, "{ u: a }"), (150, "{ u: a }")], end: 160))
        XCTAssertEqual(
            windows,
            [
                "100: {\"u\":\"a\",\"n\":2}", "110: {\"u\":\"b\",\"n\":1}", "160: {\"u\":\"a\",\"n\":1}",
                "160: completed",
            ], "each group's windows are aligned to its own start")
    }

    func testGroupByChecksItsChainAtItsLineAndAnErrorEndsEveryGroup() throws {
        XCTAssertThrowsError(try run("  - groupBy: { key: .u, ops: [{ reduc: acc }] }", "[]")) { error in
            XCTAssertTrue("\(error)".contains("unknown operator 'reduc'; did you mean 'reduce'?"), "\(error)")
            XCTAssertTrue("\(error)".contains("p.yaml:3:33"), "\(error)")
        }
        let failed = try run(
            "  - groupBy: { key: .u, ops: [{ map: .n * 2 }] }",
            "[{ at: 0ms, next: { u: a, n: 1 } }, { at: 5ms, next: { u: b, n: x } }, { at: 9ms, complete: true }]")
        XCTAssertEqual(failed.first, "0: 2")
        XCTAssertEqual(failed.count, 2)
        XCTAssertTrue(failed[1].hasPrefix("5: error"), "\(failed)")
    }

    func testAWindowsOpsRunOnItsElementsWhenItCloses() throws {
        let events = timeline([(0, "{ b: 3 }"), (50, "{ b: 4 }"), (120, "{ b: 10 }")], end: 130)
        XCTAssertEqual(
            try run("  - window: { every: 100ms, ops: [{ reduce: { seed: 0, accumulator: acc + .b } }] }", events),
            ["100: 7", "130: 10", "130: completed"])
        XCTAssertEqual(
            try run("  - window: { every: 100ms, ops: [{ delay: 30ms }, { map: .b }] }", events),
            ["130: 3", "130: 4", "160: 10", "160: completed"], "the result waits for the chains to complete")
    }

    func testGroupByClosesTheLeastRecentlyUsedGroupAndEndsInThatOrder() throws {
        let events = timeline(
            [
                (0, "{ u: a, n: 1 }"), (10, "{ u: b, n: 2 }"), (20, "{ u: a, n: 3 }"), (30, "{ u: c, n: 4 }"),
                (40, "{ u: a, n: 5 }"),
            ], end: 50)
        XCTAssertEqual(
            try run(
                "  - groupBy: { key: .u, maxGroups: 2, ops: [{ reduce: { seed: 0, accumulator: acc + .n } }] }", events),
            ["30: 2", "50: 4", "50: 9", "50: completed"],
            "b, used least recently, is closed for c; at the end c (last at 30) closes before a (last at 40)")
    }

    func testBadOpsAndABadEventTimeAreClearErrors() throws {
        XCTAssertThrowsError(try run("  - groupBy: { key: .u, ops: reduce }", "[]")) { error in
            XCTAssertTrue("\(error)".contains("must be a list of operators"), "\(error)")
        }
        let failed = try run(
            "  - aggregate: { every: 1m, time: .ts, fields: { n: count } }",
            "[{ at: 0ms, next: { ts: soon } }, { at: 5ms, complete: true }]")
        XCTAssertEqual(failed.count, 1)
        XCTAssertTrue(failed[0].contains("'time' is not a number"), "\(failed)")
    }

    /// Keys read in place from a line and keys evaluated (escaped, beyond ASCII, not text) meet in
    /// the same rows, whichever came first.
    func testAKeyReadInPlaceAndTheSameKeyEvaluatedCountTogether() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines = [
            #"{"k": "\u0061"}"#, #"{"k": "a"}"#, #"{"k": "caf\#u{E9}"}"#, #"{"k": "cafe\u0301"}"#,
            #"{"k": "a key longer than eight bytes"}"#, #"{"k": "a key longer than eight bytes"}"#, #"{"k": 1}"#,
            #"{"k": null}"#, #"{"x": 1}"#, #"{"k": ""}"#, #"{"k": ""}"#, #"{"k": "a"}"#,
        ]
        let path = directory.appendingPathComponent("keys.jsonl").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let harness = try PipelineHarness().run(
            "source: { file: \(path) }\nops:\n  - aggregate: { by: .k, fields: { n: count } }\nsink: record")
        XCTAssertEqual(
            harness.events().map { $0.drop(while: { $0 != " " }).dropFirst() }.map(String.init),
            [
                #"{"key":"a","start":0,"n":3}"#, #"{"key":"caf\#u{E9}","start":0,"n":2}"#,
                #"{"key":"a key longer than eight bytes","start":0,"n":2}"#, #"{"key":1,"start":0,"n":1}"#,
                #"{"key":null,"start":0,"n":2}"#, #"{"key":"","start":0,"n":2}"#, "completed",
            ])
    }

    /// An element whose later field fails counts in none of its fields, however its earlier ones
    /// were read (a plain integer read in place, or a value), and the next element counts alone.
    func testAnElementThatFailsHalfWayCountsInNoneOfItsFields() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: { k: a, v: 5, w: 1 } }, { at: 1ms, next: { k: a, v: 7, w: x } },
                               { at: 2ms, next: { k: a, v: 1.5, w: y } }, { at: 3ms, next: { k: a, w: 2 } },
                               { at: 160ms, complete: true }] }
            ops:
              - aggregate: { by: .k, every: 100ms, fields: { total: { sum: .v }, mean: { avg: .v }, top: { max: .w } } }
                onError: skip
            sink: record
            """)
        XCTAssertEqual(
            harness.events(), [#"100: {"key":"a","start":0,"total":5,"mean":5.0,"top":2}"#, "160: completed"])
        XCTAssertTrue(harness.skipped.first?.contains("skipped 2 elements") ?? false, "\(harness.skipped)")
    }

    func testMoreKeysThanMaxKeysInAWindowAreElementErrors() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: a }, { at: 1ms, next: b }, { at: 2ms, next: c }, { at: 3ms, next: a },
                               { at: 150ms, next: c }, { at: 160ms, complete: true }] }
            ops:
              - aggregate: { by: ., every: 100ms, maxKeys: 2, fields: { n: count } }
                onError: skip
            sink: record
            """)
        XCTAssertEqual(
            harness.events(),
            [
                #"100: {"key":"a","start":0,"n":2}"#, #"100: {"key":"b","start":0,"n":1}"#,
                #"160: {"key":"c","start":100,"n":1}"#, "160: completed",
            ])
        XCTAssertTrue(harness.skipped.first?.contains("holds 2 keys already (maxKeys)") ?? false, "\(harness.skipped)")
    }

    func testMaxKeysBoundsTheOperatorOverEveryPartitionItIsSplitInto() throws {
        // 20 keys over 4 partitions: each held about 5, under a bound of 10 that once applied to
        // each partition alone (2,000,000 keys passed the 1,000,000 default on two cores).
        let events = (0..<20).map { "{ at: \($0)ms, next: k\($0) }" }.joined(separator: ", ")
        let harness = try PipelineHarness().run(
            """
            source: { events: [\(events), { at: 50ms, next: k0 }, { at: 150ms, next: k19 }, { at: 160ms, complete: true }] }
            ops:
              - partitionBy:
                  key: .
                  partitions: 4
                  ops:
                    - aggregate: { by: ., every: 100ms, maxKeys: 10, fields: { n: count } }
                      onError: skip
            sink: record
            """)
        let first = harness.events().filter { $0.hasPrefix("100: ") }
        XCTAssertEqual(first.count, 10, "\(harness.events())")
        XCTAssertTrue(first.contains(#"100: {"key":"k0","start":0,"n":2}"#), "\(first)")
        XCTAssertTrue(harness.skipped.first?.contains("aggregate skipped 10 elements") ?? false, "\(harness.skipped)")
        XCTAssertTrue(harness.skipped.first?.contains("holds 10 keys already (maxKeys)") ?? false, "\(harness.skipped)")
        // The window closed gave its keys back: the next one takes a key again.
        XCTAssertTrue(harness.events().contains(#"160: {"key":"k19","start":100,"n":1}"#), "\(harness.events())")
    }

    func testMaxMemoryBoundsTheBytesItsKeysTake() throws {
        // Keys of 300,000 characters take about 600 KB each: a second does not fit in 1 MiB.
        let long = { (letter: String) in String(repeating: letter, count: 300_000) }
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: \(long("a")) }, { at: 1ms, next: \(long("b")) }, { at: 2ms, next: \(long("a")) }, { at: 3ms, complete: true }] }
            ops:
              - aggregate: { by: ., every: 100ms, maxMemoryMiB: 1, fields: { n: count } }
                onError: skip
              - map: .n
            sink: record
            """)
        XCTAssertEqual(harness.events(), ["3: 2", "3: completed"])
        XCTAssertTrue(
            harness.skipped.first?.contains("its keys take about 1 MiB already (maxMemoryMiB); key \"bbbb") ?? false,
            "\(harness.skipped)")
    }

    func testExtremeTimesAreElementErrorsAndPeriodsBelowAMillisecondAreRefused() throws {
        // Times that overflowed a window number trapped; now each is an element error at its element.
        for ts in ["9223372036854775807", "-9223372036854775807", "1e300"] {
            let failed = try run(
                "  - aggregate: { every: 10ms, time: .ts, fields: { n: count } }",
                "[{ at: 0ms, next: { ts: \(ts) } }, { at: 5ms, complete: true }]")
            XCTAssertTrue(failed.first?.contains("is out of range") ?? false, "\(ts): \(failed)")
        }
        let late = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: { t: -9223372036854775807 } }, { at: 5ms, complete: true }] }
            eventTime: { time: .t, maxDelay: 10s }
            sink: record
            """
        ).events()
        XCTAssertTrue(late.first?.contains("not a time") ?? false, "\(late)")
        // A period below the clocks' millisecond would never end (or end at every step).
        for op in [
            "aggregate: { every: 1ns, fields: { n: count } }", "window: { every: 1us }",
            "window: { sessionGap: 0.5ms }",
            "window: { every: 1s, slide: 1ns }", "groupBy: { key: ., idle: 1us, ops: [] }", "dedupe: { ttl: 1ns }",
            "sample: 1ns", "buffer: { timeSpan: 1ns, count: 2 }",
        ] {
            let diagnostics = PipelineHarness().diagnostics("source: { events: [] }\nops:\n  - \(op)\nsink: stdout\n")
            XCTAssertTrue(diagnostics.first?.contains("at least 1ms") ?? false, "\(op): \(diagnostics)")
        }
    }
}
