import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// A watched run's meters on the virtual clock: what each component emitted or received, under
/// the place the file gives it, in both forms of the file; errors and ends; and readiness.
final class RunMetersTests: LeakCheckingTestCase {
    private func counts(_ meters: RunMeters) -> [String] {
        meters.components.map { meter in
            "\(meter.place) \(meter.component) in=\(meter.elementsIn.map(String.init) ?? "-") out=\(meter.kind == .sink ? "-" : String(meter.elements)) errors=\(meter.errors) ended=\(meter.isEnded)"
        }
    }

    /// The meters of `pipeline`'s run on the virtual clock, every component metered.
    private func watchedRun(_ pipeline: String, services: [AnyObject] = []) throws -> RunMeters {
        let harness = PipelineHarness()
        let meters = RunMeters()
        harness.meters = meters
        try harness.run(pipeline, services: services)
        return meters
    }

    func testTheLinearFormCountsEachStage() throws {
        let meters = try watchedRun(
            """
            source: { events: { marbles: "-1-2-3-4|" } }
            ops:
              - filter: . != 2
              - map: { n: . }
            sink: record
            """)
        XCTAssertEqual(
            counts(meters),
            [
                "source events in=- out=4 errors=0 ended=true",
                "ops.0 filter in=4 out=3 errors=0 ended=true",
                "ops.1 map in=3 out=3 errors=0 ended=true",
                "sink record in=3 out=- errors=0 ended=true",
            ])
    }

    func testSourcesOfKnownSizeReportHowFarTheyAreAndAnUnwatchedOperatorIsNotMetered() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = [
            ("lines.txt", "one\ntwo\nthree\n"), ("rows.jsonl", "{\"n\":1}\n{\"n\":2}\n"), ("list.json", "[1, 2, 3, 4]"),
        ]
        for (name, text) in files {
            try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let sources = [
            ("file: { path: \(folder.path)/lines.txt }", 14, 14),
            ("fixture: \(folder.path)/rows.jsonl", 16, 16),
            ("fixture: \(folder.path)/list.json", 4, 4),
        ]
        for (source, done, total) in sources {
            let harness = PipelineHarness()
            // What a run that nothing watches has: its sources and sinks, no operator.
            let meters = RunMeters(metersOperators: false)
            harness.meters = meters
            try harness.run("source: { \(source) }\nops:\n  - map: .\nsink: record\n")
            XCTAssertEqual(meters.components.map(\.place), ["source", "sink"], source)
            let progress = try XCTUnwrap(meters.components.first?.progress.fraction, source)
            XCTAssertEqual(progress.done, done, source)
            XCTAssertEqual(progress.total, total, source)
        }
        // A source without an end knows no size.
        let harness = PipelineHarness()
        let meters = RunMeters(metersOperators: false)
        harness.meters = meters
        try harness.run("source: { interval: 10ms }\nops:\n  - take: 3\nsink: record\n")
        XCTAssertNil(meters.components.first?.progress.fraction)
    }

    func testTheGraphFormNamesStreamsAndSinksAndCountsAnError() throws {
        let meters = try watchedRun(
            """
            streams:
              numbers:
                source: { events: { marbles: "-1-2-#" } }
              doubled:
                source: { stream: numbers }
                ops:
                  - map: . + .
            sinks:
              - stream: numbers
                record: a
              - stream: doubled
                record: b
            """)
        // The error reaches the first sink first, which fails the run: doubled never sees it.
        XCTAssertEqual(
            counts(meters),
            [
                "streams.numbers.source events in=- out=2 errors=1 ended=true",
                "streams.doubled.ops.0 map in=2 out=2 errors=0 ended=false",
                "sinks.0 record in=2 out=- errors=1 ended=true",
                "sinks.1 record in=2 out=- errors=0 ended=false",
            ])
    }

    func testAPartitionByOnThePipelinesThreadCountsEachPartitionsElementsWithNoLagAndMeasuresItsState() throws {
        // Keys a, b, c: FNV-1a 32 modulo 4 puts a in partition 0, b in 1, c in 2. The run lasts
        // past a second, when each partition's state is measured.
        let meters = try watchedRun(
            """
            source: { events: [{ at: 0ms, next: a }, { at: 0ms, next: b }, { at: 0ms, next: a }, { at: 0ms, next: c }, { at: 1500ms, complete: true }] }
            ops:
              - partitionBy: { key: ., partitions: 4, ops: [ { dedupe: { key: . } } ] }
            sink: record
            """)
        let meter = try XCTUnwrap(meters.components.first { $0.component == "partitionBy" })
        func values(_ name: String) -> [Int?] {
            (0..<4).map { partition in
                meter.extraValues.first { $0.key.name == name && $0.key.label == ["partition", String(partition)] }?
                    .value
            }
        }
        XCTAssertEqual(values("partition_elements_total"), [2, 1, 1, 0])
        XCTAssertEqual(values("partition_lag"), [0, 0, 0, 0])
        // Without --state, what a checkpoint would store of each: a remembered key, or nothing
        // (an empty list).
        let empty = "[]".utf8.count
        let one = #"[{"key":"a","age":1000000000}]"#.utf8.count
        XCTAssertEqual(values("partition_state_bytes"), [one, one, one, empty])
    }

    func testReadinessWaitsForEverySourceThatIsConnecting() {
        let readiness = SourceReadiness()
        XCTAssertTrue(readiness.isReady)
        let first = readiness.connecting()
        let second = readiness.connecting()
        XCTAssertFalse(readiness.isReady)
        first()
        first()  // only the first call counts
        XCTAssertFalse(readiness.isReady)
        second()
        XCTAssertTrue(readiness.isReady)
    }

    func testARunsReadinessWaitsForTheRunToStart() {
        let readiness = RunMeters().readiness
        XCTAssertFalse(readiness.isReady, "the endpoint answers before the sources say they are connecting")
        readiness.started()
        XCTAssertTrue(readiness.isReady)
        let connected = readiness.connecting()
        readiness.started()  // only the first call counts
        XCTAssertFalse(readiness.isReady)
        connected()
        XCTAssertTrue(readiness.isReady)
    }

    func testATapCopiesWhatPassesAndCountsWhatDoesNotFit() throws {
        let harness = PipelineHarness()
        let meters = RunMeters()
        harness.meters = meters
        let run = try harness.start(
            """
            source: { events: { marbles: "-1-2-3-4-5-6-7-8|" } }
            ops:
              - map: { n: . }
            sink: record
            """)
        defer { run.dispose() }
        let map = try XCTUnwrap(meters.components.first { $0.place == "ops.0" })
        let tap = Tap(capacity: 3)
        harness.scheduler.advance(to: 10)
        map.attach(tap)
        harness.scheduler.advance(to: 1000)
        let taken = map.take(tap)
        XCTAssertEqual(
            taken.lines.map { String(decoding: $0, as: UTF8.self) }, ["{\"n\":2}\n", "{\"n\":3}\n", "{\"n\":4}\n"],
            "from when it was attached, as many as fit")
        XCTAssertEqual(taken.dropped, 4, "the fifth to the eighth did not fit and were counted")
        let again = map.take(tap)
        XCTAssertEqual(again.lines.count, 0)
        XCTAssertEqual(again.dropped, 0, "counted once")
        map.detach(tap)
    }

    func testAWatchedHTTPSourceCountsRequestsByStatusRetriesAndDurations() throws {
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent("m-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: recording) }
        let exchanges: [[String: Any]] = [(503, "{}"), (200, "[1, 2]")].map { status, body in
            [
                "request": ["method": "GET", "path": "/items", "query": [String: String]()],
                "response": ["status": status, "headers": [String: String](), "bodyText": body],
            ]
        }
        try JSONSerialization.data(withJSONObject: ["recording": 1, "exchanges": exchanges]).write(to: recording)
        let meters = try watchedRun(
            "source: { http: { url: \"http://api.test/items\", retry: { backoff: 100ms } } }\nsink: record\n",
            services: [HTTPSession(mode: .replay(recording.path))])
        let source = try XCTUnwrap(meters.components.first { $0.place == "source" })
        let extras = Dictionary(
            uniqueKeysWithValues: source.extraValues.map { ("\($0.key.name)\($0.key.label)", $0.value) })
        XCTAssertEqual(
            extras,
            [
                "http_requests_total[\"status\", \"5xx\"]": 1, "http_requests_total[\"status\", \"2xx\"]": 1,
                "http_retries_total[]": 1,
            ])
        XCTAssertEqual(source.takeDurations()["http_request_duration_seconds"]?.count, 2)
        XCTAssertEqual(source.elements, 2)
    }

    func testAWatchedFileSinkCountsItsBytesAndWrites() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("m-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let meters = try watchedRun(
            """
            source: { events: { marbles: "-1-2-3|" } }
            sink: { file: \(path) }
            """)
        let sink = try XCTUnwrap(meters.components.first { $0.place == "sink" })
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let extras = Dictionary(uniqueKeysWithValues: sink.extraValues.map { ($0.key.name, $0.value) })
        XCTAssertEqual(extras["sink_bytes_total"], size)
        XCTAssertGreaterThanOrEqual(extras["sink_writes_total"] ?? 0, 1)
    }
}
