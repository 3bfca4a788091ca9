import Components
@_spi(Host) import Pipeline
import RivuletTestSupport
@_spi(Host) import Tooling
import XCTest

/// `rivulet graph`'s text: each stream's chain, and what an operator runs for each partition or
/// group.
final class PipelineGraphTests: LeakCheckingTestCase {
    func testThePartitionedStretchIsShownUnderItsOperator() throws {
        let loaded = PipelineLoader(registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
            .load(
                text: """
                    source: { events: [] }
                    ops:
                      - partitionBy:
                          key: .customer
                          partitions: 8
                          ops:
                            - filter: .amount > 0
                            - aggregate: { by: .customer, every: 1m, fields: { n: count } }
                      - map: .n
                    sink: stdout
                    """, path: "p.yaml")
        let pipeline = try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
        XCTAssertEqual(
            PipelineGraph(pipeline).text(),
            """
            stream main
                events []
              → partitionBy {key: .customer, partitions: 8, ops: [{filter...
                  each partition: filter .amount > 0 → aggregate {by: .customer, every: 1m, fields: {n: count}}
              → map .n
              ⇒ stdout

            """)
    }
}
