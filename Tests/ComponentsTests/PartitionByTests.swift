@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @testable import Components

/// `partitionBy` on the virtual clock (where its partitions run on the pipeline's thread): each
/// keyed operator gives per key what it gives on the whole stream, with 1, 2 or 8 partitions.
final class PartitionByTests: LeakCheckingTestCase {
    /// `count` elements `{k, v, t}` over `keys` keys, arriving 100 ms apart; `t` (seconds) runs
    /// ahead with the arrivals, with some elements up to 8 s behind and a few 40 s behind (late
    /// for a 10 s maxDelay).
    private func events(_ count: Int, keys: Int) -> [(k: String, v: Int, t: Int)] {
        var random = SplitMix(seed: 7)
        return (0..<count).map { index in
            var t = index / 2
            switch random.next() % 20 {
            case 0: t -= Int(random.next() % 9)
            case 1 where index % 7 == 0: t -= 40
            default: break
            }
            return ("k\(random.next() % UInt64(keys))", Int(random.next() % 100), max(0, t))
        }
    }

    /// The pipeline: the events, eventTime on `.t`, then `ops`; what it records, each element
    /// with its time.
    private func run(_ events: [(k: String, v: Int, t: Int)], ops: String, eventTime: Bool = true) throws
        -> [String]
    {
        var lines = events.enumerated().map { index, event in
            "      - { at: \(index * 100)ms, next: { k: \(event.k), v: \(event.v), t: \(event.t) } }"
        }
        lines.append("      - { at: \(events.count * 100)ms, complete: true }")
        let harness = try PipelineHarness().run(
            """
            source:
              events:
            \(lines.joined(separator: "\n"))
            \(eventTime ? "eventTime: { time: .t * 1000, maxDelay: 10s }" : "")
            ops:
            \(ops.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            sink: record
            """, until: 10_000_000)
        XCTAssertEqual(harness.events().last?.hasSuffix("completed"), true, "\(harness.events().suffix(3))")
        return harness.events().filter { !$0.hasSuffix("completed") }
    }

    /// The same elements, each key's in the same order: the rows sorted by key, stably.
    private func byKey(_ rows: [String], key: (String) -> String) -> [String] {
        rows.enumerated().sorted { a, b in
            key(a.element) != key(b.element) ? key(a.element) < key(b.element) : a.offset < b.offset
        }.map(\.element)
    }

    /// Checks that `ops` inside `partitionBy` by `.k` gives per key what `ops` gives alone.
    private func assertPartitionedEqualsWhole(
        _ ops: String, eventTime: Bool = true, count: Int = 600, keys: Int = 23, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let input = events(count, keys: keys)
        let whole = try run(input, ops: ops, eventTime: eventTime)
        XCTAssertGreaterThan(whole.count, 10, file: file, line: line)
        // A row's key: the text after `"k":` or aggregate's `"key":` (every output here has one).
        let key = { (row: String) -> String in
            guard let start = row.range(of: "\"k\":") ?? row.range(of: "\"key\":") else { return row }
            return String(row[start.upperBound...].prefix { $0 != "," && $0 != "}" })
        }
        for partitions in [1, 2, 8] {
            let indented = ops.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
            let partitioned = try run(
                input,
                ops:
                    "- partitionBy:\n    key: .k\n    partitions: \(partitions)\n    threads: 2\n    ops:\n\(indented)",
                eventTime: eventTime)
            XCTAssertEqual(
                byKey(partitioned, key: key), byKey(whole, key: key), "\(partitions) partitions", file: file,
                line: line)
        }
    }

    func testAggregateByKeyOnEventTimeGivesEachKeyItsWholeStreamRows() throws {
        try assertPartitionedEqualsWhole(
            "- aggregate: { by: .k, every: 10s, fields: { n: count, sum: { sum: .v }, last: { last: .v } } }")
    }

    func testAggregateWithAllowedLatenessUpdatesTheSameRows() throws {
        try assertPartitionedEqualsWhole(
            "- aggregate: { by: .k, every: 10s, allowedLateness: 60s, fields: { n: count, sum: { sum: .v } } }")
    }

    func testAggregateByKeyOnTheRunsClock() throws {
        try assertPartitionedEqualsWhole(
            "- aggregate: { by: .k, every: 5s, fields: { n: count, sum: { sum: .v } } }", eventTime: false)
    }

    func testWindowInsideGroupBy() throws {
        try assertPartitionedEqualsWhole(
            """
            - groupBy:
                key: .k
                ops: [{ window: 20s }, { map: "{k: .[0].k, n: len(.), v: .[-1].v}" }]
            """)
    }

    func testDedupeByKey() throws {
        try assertPartitionedEqualsWhole("- dedupe: .k\n- map: \"{k: .k, v: .v}\"", keys: 40)
    }

    func testDedupeOfWholeElements() throws {
        try assertPartitionedEqualsWhole("- map: \"{k: .k, v: .v % 3}\"\n- dedupe: {}", keys: 5)
    }

    func testScanPerKeyInsideGroupBy() throws {
        try assertPartitionedEqualsWhole(
            """
            - groupBy:
                key: .k
                ops: [{ scan: { seed: { k: "", total: 0 }, accumulator: "{k: .k, total: acc.total + .v}" } }]
            """)
    }

    func testDistinctUntilChangedPerKeyInsideGroupBy() throws {
        try assertPartitionedEqualsWhole(
            """
            - map: "{k: .k, v: .v % 2}"
            - groupBy: { key: .k, ops: [{ distinctUntilChanged: .v }] }
            """, keys: 6)
    }

    func testAKeysElementsKeepTheirOrder() throws {
        let input = events(300, keys: 5)
        let whole = try run(input, ops: "- map: \"{k: .k, v: .v, t: .t}\"")
        let split = try run(
            input, ops: "- partitionBy: { key: .k, partitions: 8, ops: [ { map: \"{k: .k, v: .v, t: .t}\" } ] }")
        // Every element goes on as it comes, to its partition and out: the same order overall.
        XCTAssertEqual(split, whole)
    }

    /// An operator the plan splits by default (`KeyedSplit`) that cannot use threads (here the
    /// virtual clock) runs as written: the splitter says so (nil), and the run has the same
    /// events at the same times, in the same order, as one that was not offered the split.
    func testAnOperatorSplitByDefaultRunsAsWrittenOnOneThread() throws {
        let input = events(400, keys: 23)
        var lines = input.enumerated().map { index, event in
            "    - { at: \(index * 100)ms, next: { k: \(event.k), v: \(event.v), t: \(event.t) } }"
        }
        lines.append("    - { at: \(input.count * 100)ms, complete: true }")
        let text = """
            source:
              events:
            \(lines.joined(separator: "\n"))
            eventTime: { time: .t * 1000, maxDelay: 10s }
            ops:
              - aggregate: { by: .k, every: 10s, fields: { n: count, sum: { sum: .v } } }
            sink: record
            """
        let unsplit = KeyedSplitter { _, _, _ in nil }
        let whole = try PipelineHarness().run(text, until: 10_000_000, services: [unsplit]).events()
        var asked: [String] = []
        let recording = KeyedSplitter { component, key, context in
            let split = try BuiltinComponents.keyedSplitter.split(component, key, context)
            asked.append("\(component.spec.name) by \(key.source): \(split == nil ? "as written" : "split")")
            return split
        }
        let split = try PipelineHarness().run(text, until: 10_000_000, services: [recording]).events()
        XCTAssertEqual(asked, ["aggregate by .k: as written"])
        XCTAssertGreaterThan(whole.count, 50)
        XCTAssertEqual(split, whole)
    }

    func testAnErrorInOnePartitionEndsTheStream() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [ { at: 0s, next: { k: a, v: 1 } }, { at: 1s, next: { k: b, v: "x" } }, { at: 2s, next: { k: a, v: 2 } } ] }
            ops:
              - partitionBy: { key: .k, partitions: 4, ops: [ { map: .v * 2 } ] }
            sink: record
            """)
        XCTAssertEqual(harness.events().count, 2, "\(harness.events())")
        XCTAssertEqual(harness.events().first, "0: 2")
        XCTAssertTrue(harness.events()[1].hasPrefix("1000: error"), harness.events()[1])
    }

    func testLintNamesAnOperatorThatNeedsTheWholeStream() throws {
        let warnings = PipelineHarness().diagnostics(
            """
            source: { events: [] }
            ops:
              - partitionBy:
                  key: .k
                  ops: [ { map: . }, { reduce: { seed: 0, accumulator: .acc + 1 } } ]
            sink: stdout
            """)
        XCTAssertEqual(
            warnings,
            [
                "5:12: partitionBy: reduce needs the whole stream: ops run as one partition, on one thread"
            ])
    }

    func testLintWarnsOfAnAggregateKeyedByAnotherKey() throws {
        let warnings = PipelineHarness().diagnostics(
            """
            source: { events: [] }
            ops:
              - partitionBy:
                  key: .customer
                  ops: [ { aggregate: { by: .region, every: 1m, fields: { n: count } } } ]
            sink: stdout
            """)
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(
            warnings.first?.contains("aggregate keyed by .region, not by the partition key .customer") == true,
            "\(warnings)")
    }

    func testThreadsIsAutoOrANumber() throws {
        let errors = PipelineHarness().diagnostics(
            "source: { events: [] }\nops:\n  - partitionBy: { key: .k, threads: many, ops: [ { map: . } ] }\nsink: stdout\n"
        )
        XCTAssertEqual(errors.count, 1, "\(errors)")
        XCTAssertTrue(errors.first?.contains("threads is auto or a number from 1 to 256") == true, "\(errors)")
    }
}

/// A small deterministic random source for test data (SplitMix64): a failing case is the same
/// every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Which operators `partitionBy` can split, and how a key is read as deciding the partition key.
final class PartitionSafetyTests: LeakCheckingTestCase {
    func testAKeyMadeOfThePartitionKeyAndMoreDecidesIt() {
        XCTAssertTrue(PartitionSafety.contains(".k", term: ".k"))
        XCTAssertTrue(PartitionSafety.contains("[.k, .v]", term: ".k"))
        XCTAssertTrue(PartitionSafety.contains("{a: .k, b: .v}", term: ".k"))
        XCTAssertFalse(PartitionSafety.contains(".kind", term: ".k"))
        XCTAssertFalse(PartitionSafety.contains("[.v, .k.x]", term: ".k"))
        XCTAssertFalse(PartitionSafety.contains(".region", term: ".customer"))
    }

    func testTheHashIsFNV1aOfTheKeysBytes() {
        // FNV-1a 32 reference values: "" and "a".
        XCTAssertEqual("".utf8.withContiguousStorageIfAvailable { PartitionHash.fnv1a($0) }, 0x811C_9DC5)
        XCTAssertEqual("a".utf8.withContiguousStorageIfAvailable { PartitionHash.fnv1a($0) }, 0xE40C_292C)
        XCTAssertEqual("foobar".utf8.withContiguousStorageIfAvailable { PartitionHash.fnv1a($0) }, 0xBF9C_F968)
        // A text key hashes its bytes; any other its JSON text.
        XCTAssertEqual(PartitionHash.partition(of: .string("a"), count: 7), Int(0xE40C_292C % 7))
        XCTAssertEqual(
            PartitionHash.partition(of: .int(42), count: 16),
            PartitionHash.partition(of: .string("42"), count: 16))
        XCTAssertEqual(PartitionHash.partition(of: .string("anything"), count: 1), 0)
        // docs/running-several-runners.md's example: customer c7 among 16 partitions.
        XCTAssertEqual(PartitionHash.partition(of: .string("c7"), count: 16), 15)
    }

    /// A power of two of partitions takes the hash's low bits (no division): the same partition as
    /// the remainder, for every count.
    func testAKeysPartitionIsItsHashModuloTheCount() {
        for key in ["", "a", "c7", "k7919", "caf\u{e9}", String(repeating: "z", count: 40)] {
            let hash = key.utf8.withContiguousStorageIfAvailable { PartitionHash.fnv1a($0) }!
            for count in 1...130 {
                XCTAssertEqual(
                    PartitionHash.partition(of: .string(key), count: count), Int(hash % UInt32(count)),
                    "\(key) among \(count)")
            }
        }
    }

    /// A key read in place from a line as read (text hashed where it lies) lands where the same key
    /// read as a value lands: escapes, other scripts, numbers, lists, a missing member.
    func testAKeyReadInPlaceLandsWhereTheKeysValueDoes() throws {
        let key = try Expression(".k")
        let lines = [
            #"{"k": "c7"}"#, #"{"k": "caf\u00e9"}"#, #"{"k": "café ☕"}"#, #"{"k": "a\"b"}"#, #"{"k": ""}"#,
            #"{"k": 42}"#, #"{"k": 1.50}"#, #"{"k": [1, "a"]}"#, #"{"k": null}"#, #"{"other": 1}"#,
        ]
        var inPlace = 0
        for line in lines {
            let element = try Array(line.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
            let value = try XCTUnwrap(key.fieldValue(of: element))
            for count in [1, 2, 8, 16] {
                guard
                    let partition = key.withFieldText(
                        of: element, { PartitionHash.partition(ofText: $0, count: count) })
                else { continue }
                inPlace += 1
                XCTAssertEqual(partition, PartitionHash.partition(of: value, count: count), "\(line) among \(count)")
            }
        }
        XCTAssertEqual(inPlace, 3 * 4, "the three text keys written without escapes are read in place")
    }
}
