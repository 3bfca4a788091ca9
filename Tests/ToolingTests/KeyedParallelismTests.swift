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
            ops:
              - aggregate: { by: .customer, every: 1m, fields: { n: count } }
              - aggregate: { every: 1m, fields: { n: count } }
              - aggregate: { by: .customer, every: 1m, fields: { at: { max: now() } } }
              - aggregate: { by: .customer, every: 1m, fields: { n: count }, onError: skip }
              - groupBy: { key: .customer, ops: [ { aggregate: { by: .customer, every: 1m, fields: { n: count } } } ] }
            sink: stdout
            """)
        let split = KeyedParallelism.splittingByDefault(pipeline)
        let operators = try XCTUnwrap(split.streams.first?.operators)
        XCTAssertEqual(operators.map(\.spec.name), ["partitionBy", "aggregate", "aggregate", "aggregate", "groupBy"])
        let partitionBy = operators[0]
        XCTAssertEqual((partitionBy.parameters.values["key"] as? Pipeline.Expression)?.source, ".customer")
        XCTAssertEqual(partitionBy.parameters.values["byDefault"] as? Bool, true)
        let chain = try XCTUnwrap(partitionBy.parameters.values["ops"] as? ParameterValues.OperatorChain)
        XCTAssertEqual(chain.operators.map(\.spec.name), ["aggregate"])
        // The aggregate inside is the one written, where it was written.
        XCTAssertEqual(chain.operators[0].use.location, pipeline.streams[0].operators[0].use.location)
        XCTAssertEqual(partitionBy.use.location, pipeline.streams[0].operators[0].use.location)
        // Defaults (16 partitions, a thread per core) are partitionBy's own.
        XCTAssertNil(partitionBy.parameters.values["partitions"])
        XCTAssertEqual(KeyedParallelism.partitions, 16)
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
