import Components
@_spi(Host) import Pipeline
@_spi(Host) import Tooling
import XCTest

/// Which operators `rivulet run` splits over the cores by default, and what it puts in their place.
final class KeyedParallelismTests: XCTestCase {
    private func load(_ text: String) throws -> ValidatedPipeline {
        let loaded = PipelineLoader(registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
            .load(text: text, path: "p.yaml")
        return try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
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
        let split = KeyedParallelism.splittingByDefault(pipeline)
        let operators = try XCTUnwrap(split.streams.first?.operators)
        XCTAssertEqual(
            operators.map(\.spec.name),
            ["eventTime", "partitionBy", "aggregate", "aggregate", "aggregate", "aggregate", "groupBy"])
        let partitionBy = operators[1]
        XCTAssertEqual((partitionBy.parameters.values["key"] as? Pipeline.Expression)?.source, ".customer")
        XCTAssertEqual(partitionBy.parameters.values["byDefault"] as? Bool, true)
        let chain = try XCTUnwrap(partitionBy.parameters.values["ops"] as? ParameterValues.OperatorChain)
        XCTAssertEqual(chain.operators.map(\.spec.name), ["aggregate"])
        // The aggregate inside is the one written, where it was written.
        XCTAssertEqual(chain.operators[0].use.location, pipeline.streams[0].operators[1].use.location)
        XCTAssertEqual(partitionBy.use.location, pipeline.streams[0].operators[1].use.location)
        // Defaults (16 partitions, a thread per core) are partitionBy's own.
        XCTAssertNil(partitionBy.parameters.values["partitions"])
        XCTAssertEqual(KeyedParallelism.partitions, 16)
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
        let split = KeyedParallelism.splittingByDefault(pipeline)
        XCTAssertEqual(split.streams.first?.operators.map(\.spec.name), ["aggregate", "partitionBy"])
    }

    func testAPipelineWithNothingToSplitIsUnchanged() throws {
        let pipeline = try load(
            """
            source: { events: [] }
            ops: [ { map: .v }, { scan: { seed: 0, accumulator: "acc + ." } } ]
            sink: stdout
            """)
        let split = KeyedParallelism.splittingByDefault(pipeline)
        XCTAssertEqual(split.streams.map { $0.operators.map(\.spec.name) }, [["map", "scan"]])
    }
}
