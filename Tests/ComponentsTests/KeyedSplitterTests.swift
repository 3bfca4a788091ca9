@_spi(Host) import Components
import RivuletTestSupport
import XCTest

@_spi(Host) @testable import Pipeline

/// Which operators the compiler's plan splits over the cores by default (`KeyedSplit`, from what
/// they declare), and `partitionBy` as the splitter that runs them so.
final class KeyedSplitterTests: LeakCheckingTestCase {
    private func load(_ text: String) throws -> ValidatedPipeline {
        let loaded = PipelineLoader(registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
            .load(text: text, path: "p.yaml")
        return try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
    }

    /// The split keys of the first stream's operators, by index.
    private func splits(_ pipeline: ValidatedPipeline, watched: Bool = false, keepsState: Bool = false) -> [Int: String]
    {
        let plan = CompilePlan(pipeline, watchesOperators: watched, cores: 2, keepsState: keepsState)
        return plan.streams[0].splits.mapValues(\.key.source)
    }

    func testOnlyAStreamsAggregateByAKeyThatMayRunOnAThreadIsSplit() throws {
        let pipeline = try load(
            """
            source: { events: [] }
            eventTime: { time: .t }
            ops:
              - aggregate: { by: .customer, every: 1m, fields: { n: count } }
              - aggregate: { every: 1m, fields: { n: count } }
              - aggregate: { by: .customer, every: 1m, allowedLateness: 1m, fields: { n: count } }
              - aggregate: { by: .customer, every: 1m, fields: { at: { max: now() } } }
              - aggregate: { by: .customer, every: 1m, fields: { n: count }, onError: skip }
              - groupBy: { key: .customer, ops: [ { aggregate: { by: .customer, every: 1m, fields: { n: count } } } ] }
            sink: stdout
            """)
        // eventTime is the stream's operator 0.
        XCTAssertEqual(splits(pipeline), [1: ".customer"])
        XCTAssertEqual(
            KeyedSplit.keys(pipeline).mapValues(\.source), [pipeline.streams[0].operators[1].use.location: ".customer"])
        // Defaults (16 partitions, a thread per core) are partitionBy's own.
        XCTAssertEqual(BuiltinComponents.defaultPartitions, 16)
    }

    /// Split, the partitions' results are put back in the one-thread order; where they could not
    /// be (windows on the run's clock), the aggregate is not split. Without windows (results at
    /// the end) it is, on either clock.
    func testWindowsOnTheRunsClockAreNotSplit() throws {
        let pipeline = try load(
            """
            source: { events: [] }
            ops:
              - aggregate: { by: .customer, every: 1m, fields: { n: count } }
              - aggregate: { by: .customer, fields: { n: count } }
            sink: stdout
            """)
        XCTAssertEqual(splits(pipeline), [1: ".customer"])
    }

    func testAPipelineWithNothingToSplitIsUnchanged() throws {
        let pipeline = try load(
            """
            source: { events: [] }
            ops: [ { map: .v }, { scan: { seed: 0, accumulator: "acc + ." } } ]
            sink: stdout
            """)
        XCTAssertEqual(splits(pipeline), [:])
    }

    /// Watched operators show as written, checkpoints must not depend on the machine, and
    /// `parallel: 1` says one thread: none of these runs splits.
    func testAWatchedRunARunKeepingStateAndParallelOneSplitNothing() throws {
        let text = """
            source: { events: [] }
            ops: [ { aggregate: { by: .customer, fields: { n: count } } } ]
            sink: stdout
            """
        XCTAssertEqual(splits(try load(text)), [0: ".customer"])
        XCTAssertEqual(splits(try load(text), watched: true), [:])
        XCTAssertEqual(splits(try load(text), keepsState: true), [:])
        XCTAssertEqual(splits(try load("parallel: 1\n" + text)), [:])
    }
}
