import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// How a compiled pipeline settles the messages of a durable source: an element's origin is let
/// go after every sink that received it flushed (one flush per batch of work), after the sinks
/// are closed at the end, at once when it was dropped; a failure marks it; a failed run's
/// teardown is marked abandoned.
final class AcknowledgementTests: LeakCheckingTestCase {
    private var harness: PipelineHarness!
    private var log: [String] = []

    /// An origin that writes down when it is let go, and how.
    private final class LoggingOrigin: Origin {
        let value: Int
        let ending: RunEnding
        let note: (String) -> Void
        var failed = false

        init(_ value: Int, ending: RunEnding, note: @escaping (String) -> Void) {
            self.value = value
            self.ending = ending
            self.note = note
        }

        override func fail(_ error: any Error) { failed = true }

        override func checkpointed() { note("checkpointed \(value)") }

        deinit { note("settled \(value)\(failed ? " failed" : "")\(ending.isAbandoned ? " abandoned" : "")") }
    }

    /// A sink that records, flushes when asked, and says so.
    private final class FlushingRecorder: FlushingSink {
        let note: (String) -> Void
        var held = 0
        init(note: @escaping (String) -> Void) { self.note = note }
        func receive(_ event: Event<Value>) {
            if case .next = event { held += 1 }
        }
        func flush() {
            note("flush \(held)")
            held = 0
        }
        func close() { note("close \(held)") }
    }

    /// Checkpoints `checkpointing()` asked the clock for: one not yet due when a run ends holds
    /// the checkpoints, which hold the clock.
    private var scheduledCheckpoints: [any Disposable] = []

    override func tearDown() {
        // The run the harness holds is freed before the leak check.
        for scheduled in scheduledCheckpoints { scheduled.dispose() }
        scheduledCheckpoints = []
        harness = nil
        super.tearDown()
    }

    override func setUp() {
        super.setUp()
        log = []
        harness = PipelineHarness()
        let note: (String) -> Void = { [unowned self] in self.log.append("\(self.harness.scheduler.clock): \($0)") }
        let values = Parameter<[Int]>("values", default: [], doc: "The elements, one every 10 ms.")
        let complete = Parameter<Bool>("complete", default: true, doc: "Complete after the last.")
        let source = ComponentSpec(
            name: "acked", summary: "Elements with origins.", parameters: [values, complete], example: "source: acked",
            factory: .source { parameters, context in
                let ending = context.shared(RunEnding.self) { RunEnding() }
                return PipelineSource { _ in
                    Observable { observer, lifetime in
                        let all = parameters[values]
                        for (index, value) in all.enumerated() {
                            let timer = context.scheduler.schedule(after: .milliseconds(10 * (index + 1))) {
                                Origin.with(LoggingOrigin(value, ending: ending, note: note)) {
                                    observer.on(.next(.int(value)))
                                }
                                if index == all.count - 1 && parameters[complete] { observer.on(.completed) }
                            }
                            lifetime.add(timer)
                        }
                    }
                }
            })
        let sink = ComponentSpec(
            name: "flushing", summary: "A flushing sink.", parameters: [], example: "sink: flushing",
            factory: .sink { _, _ in FlushingRecorder(note: note) })
        harness.extraComponents = [source, sink]
    }

    func testAnElementIsSettledAfterTheSinkFlushedAndADroppedOneAtOnce() throws {
        try harness.run(
            """
            source: { acked: { values: [1, 2, 3], complete: false } }
            ops:
              - filter: . != 2
            sink: flushing
            """, until: 100)
        XCTAssertEqual(
            log,
            [
                "10: flush 1", "10: settled 1", "20: settled 2", "30: flush 1", "30: settled 3", "100: close 0",
            ])
    }

    func testTheLastElementsAreSettledOnlyAfterTheSinkClosed() throws {
        try harness.run(
            """
            source: { acked: { values: [1, 2] } }
            ops:
              - buffer: { count: 2, timeSpan: 1s }
            sink: flushing
            """)
        // The buffer [1, 2] and, at completion, the empty one: written by the close, then settled.
        XCTAssertEqual(log, ["20: close 2", "20: settled 1", "20: settled 2"], "\(log)")
    }

    func testAnElementMadeOfSeveralSettlesThemAllAfterOneFlush() throws {
        try harness.run(
            """
            source: { acked: { values: [1, 2], complete: false } }
            ops:
              - buffer: { count: 2, timeSpan: 1s }
            sink: flushing
            """, until: 50)
        XCTAssertEqual(log, ["20: flush 1", "20: settled 1", "20: settled 2", "50: close 0"], "\(log)")
    }

    /// Checkpoints at 30 ms and 1005 ms on the harness's clock, noting each commit (or failing it).
    private func checkpointing(failing: Bool = false) -> Checkpoints {
        let checkpoints = Checkpoints(restored: [:], interval: .milliseconds(30), scheduler: harness.scheduler) {
            [unowned self] snapshot in
            if failing { throw CocoaError(.fileWriteOutOfSpace) }
            self.log.append("\(self.harness.scheduler.clock): commit \(snapshot["main#0 buffer"] ?? .null)")
        }
        // One while elements are held, one after what was written at 1 s.
        scheduledCheckpoints = [
            harness.scheduler.schedule(after: .milliseconds(30)) { checkpoints.checkpoint() },
            harness.scheduler.schedule(after: .milliseconds(1005)) { checkpoints.checkpoint() },
        ]
        return checkpoints
    }

    func testAnElementAnOperatorHoldsIsSettledByTheCheckpointThatKeepsIt() throws {
        let checkpoints = checkpointing()
        try harness.run(
            """
            source: { acked: { values: [1, 2], complete: false } }
            ops:
              - buffer: { count: 5, timeSpan: 1s }
            sink: flushing
            """, until: 1010, services: [checkpoints])
        // Held by the buffer, so not settled by output until 1 s; the checkpoint at 30 ms keeps them.
        // Written at 1 s, they are let go by the next checkpoint, which commits the sink's length.
        XCTAssertEqual(
            log,
            [
                "30: commit {\"items\":[1,2],\"left\":970000000}", "30: checkpointed 1", "30: checkpointed 2",
                "1000: flush 1", "1005: commit {\"items\":[],\"left\":995000000}", "1005: checkpointed 1",
                "1005: checkpointed 2", "1005: settled 1", "1005: settled 2", "1010: close 0",
            ], "\(log)")
    }

    func testAReduceUnderCheckpointsSettlesItsMessagesAtEachCheckpointNotAtTheEnd() throws {
        let checkpoints = checkpointing()
        try harness.run(
            """
            source: { acked: { values: [1, 2, 3, 4], complete: false } }
            ops:
              - reduce: { seed: 0, accumulator: acc + . }
            sink: flushing
            """, until: 60, services: [checkpoints])
        XCTAssertEqual(
            log.filter { $0.contains("checkpointed") }, ["30: checkpointed 1", "30: checkpointed 2"],
            "\(log)")
    }

    func testAnAggregateHoldsItsWindowsMessagesUntilTheWindowIsWritten() throws {
        try harness.run(
            """
            source: { acked: { values: [1, 2, 3], complete: false } }
            ops:
              - aggregate: { every: 1s, fields: { n: count } }
            sink: flushing
            """, until: 1010)
        XCTAssertEqual(
            log, ["1000: flush 1", "1000: settled 1", "1000: settled 2", "1000: settled 3", "1010: close 0"], "\(log)")
    }

    /// An operator holding 1, 2 and 3 (from 10 to 30 ms) in a window written at 1 s: the checkpoint
    /// at 30 ms keeps 1 and 2; the one at 1005 ms, after the write, lets all three go.
    private func assertAWindowOfTheseHoldsItsMessagesUntilCheckpointed(
        _ step: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let checkpoints = checkpointing()
        try harness.run(
            "source: { acked: { values: [1, 2, 3], complete: false } }\nops:\n  - \(step)\nsink: flushing",
            until: 1010, services: [checkpoints])
        XCTAssertEqual(
            log.filter { $0.contains("checkpointed") || $0.contains("settled") },
            [
                "30: checkpointed 1", "30: checkpointed 2", "1005: checkpointed 1", "1005: checkpointed 2",
                "1005: checkpointed 3", "1005: settled 1", "1005: settled 2", "1005: settled 3",
            ], "\(log)", file: file, line: line)
    }

    func testAnAggregateUnderCheckpointsSettlesWhatItsWindowHoldsAtTheCheckpoint() throws {
        try assertAWindowOfTheseHoldsItsMessagesUntilCheckpointed("aggregate: { every: 1s, fields: { n: count } }")
    }

    func testAWindowHoldsItsMessagesUntilItIsWrittenOrCheckpointed() throws {
        try assertAWindowOfTheseHoldsItsMessagesUntilCheckpointed("window: { every: 1s }")
    }

    func testAFailedCheckpointLetsNothingWrittenGo() throws {
        let checkpoints = checkpointing(failing: true)
        try harness.run(
            """
            source: { acked: { values: [1], complete: false } }
            sink: flushing
            """, until: 100, services: [checkpoints])
        // Written at 10 ms, kept for the next commit; the commit at 30 ms fails: still held.
        XCTAssertEqual(log, ["10: flush 1", "100: close 0"], "\(log)")
        XCTAssertNotNil(checkpoints.failure)
    }

    func testAFailedCheckpointSettlesNothing() throws {
        let checkpoints = checkpointing(failing: true)
        try harness.run(
            """
            source: { acked: { values: [1, 2], complete: false } }
            ops:
              - debounce: 1s
            sink: flushing
            """, until: 100, services: [checkpoints])
        XCTAssertFalse(log.contains { $0.contains("checkpointed") }, "\(log)")
        XCTAssertNotNil(checkpoints.failure)
    }

    func testASkippedElementIsFailedAndAFailedRunsElementsAreAbandoned() throws {
        try harness.run(
            """
            source: { acked: { values: [1, 0, 2], complete: false } }
            ops:
              - map: 10 / .
                onError: skip
              - debounce: 1s
            sink: flushing
            """, until: 25)
        XCTAssertEqual(log, ["20: settled 0 failed", "25: settled 1 abandoned", "25: close 0"], "\(log)")
        XCTAssertEqual(harness.outcome.map { "\($0)" }, "cancelled")
    }

    func testSQLiteRowsAreSettledWhenTheirTransactionIsCommitted() throws {
        let database = FileManager.default.temporaryDirectory.appendingPathComponent("ack-\(UUID().uuidString).db")
        defer { try? FileManager.default.removeItem(at: database) }
        try harness.run(
            """
            source: { acked: { values: [1, 2, 3, 4], complete: false } }
            ops:
              - map: { n: . }
            sink: { sqlite: { path: \(database.path), table: t, batch: { count: 3, period: 1s } } }
            """, until: 2000)
        // Three rows commit at the third; the fourth when the period is over (1 s after it).
        XCTAssertEqual(log, ["30: settled 1", "30: settled 2", "30: settled 3", "1040: settled 4"], "\(log)")
    }

    /// Writes 1 and 2 to an SQLite table, a transaction each (at 10 and 20 ms), under checkpoints
    /// at 30 ms and 1005 ms; returns what was settled, and how.
    private func settledRows(failing: Bool) throws -> (checkpoints: Checkpoints, settled: [String]) {
        let database = FileManager.default.temporaryDirectory.appendingPathComponent("ack-\(UUID().uuidString).db")
        defer { try? FileManager.default.removeItem(at: database) }
        let checkpoints = checkpointing(failing: failing)
        try harness.run(
            """
            source: { acked: { values: [1, 2], complete: false } }
            ops:
              - map: { n: . }
            sink: { sqlite: { path: \(database.path), table: t, batch: { count: 1, period: 1s } } }
            """, until: 100, services: [checkpoints])
        return (checkpoints, log.filter { $0.contains("settled") || $0.contains("checkpointed") })
    }

    func testUnderCheckpointsSQLiteRowsAreSettledByTheCheckpointAfterTheirCommitNotByTheCommit() throws {
        // A resumed run emits again what came after its last checkpoint (a window, which replaces
        // its row): a committed row is final only once a checkpoint after it is.
        let settled = try settledRows(failing: false).settled
        XCTAssertEqual(
            settled, ["30: checkpointed 1", "30: checkpointed 2", "30: settled 1", "30: settled 2"], "\(log)")
    }

    func testUnderCheckpointsCommittedRowsAreNotSettledWhenTheCheckpointFails() throws {
        let (checkpoints, settled) = try settledRows(failing: true)
        XCTAssertEqual(settled, [], "\(log)")
        checkpoints.end()
        XCTAssertEqual(log.filter { $0.contains("settled") }.count, 2, "\(log)")
    }

    func testAnHTTPRequestSettlesItsElementsWhenAnsweredAndFailsThemWhenRefused() throws {
        let entries: [[String: Any]] = [
            (503, "busy"), (200, "ok"), (400, "bad"),
        ].map { status, body in
            [
                "request": ["method": "POST", "path": "/hook", "query": [String: String]()],
                "response": ["status": status, "headers": [String: String](), "bodyText": body],
            ]
        }
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent("ack-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: recording) }
        try JSONSerialization.data(withJSONObject: ["recording": 1, "exchanges": entries]).write(to: recording)
        try harness.run(
            """
            source: { acked: { values: [1, 2], complete: false } }
            sink: { http: { url: "http://api.test/hook", retry: { backoff: 100ms } }, onError: skip }
            """, until: 1000, services: [HTTPSession(mode: .replay(recording.path))])
        // 1 is refused once (503), then accepted after the backoff; 2 waits its turn and is refused.
        XCTAssertEqual(log.count, 2, "\(log)")
        let first = log.first.flatMap { Int($0.split(separator: ":")[0]) } ?? 0
        XCTAssertTrue((60...110).contains(first), "settled after the retry's answer: \(log)")
        XCTAssertEqual(log.first?.hasSuffix(": settled 1"), true, "\(log)")
        XCTAssertEqual(log.last, "\(first): settled 2 failed", "\(log)")
    }
}
