import Foundation
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@testable import Components
@_spi(Host) @_spi(Components) @testable import Pipeline

/// What a watched `partitionBy` shows of each partition: elements sent, lag (sent and not done
/// yet on its thread) and the bytes of its state in a checkpoint's snapshot.
final class PartitionGaugesTests: LeakCheckingTestCase {
    private func meter() -> ComponentMeter {
        RunMeters().add(place: "ops.0", kind: .operator, component: "partitionBy", upstream: nil, key: "main#0")
    }

    private func values(_ meter: ComponentMeter, _ name: String, partitions: Int) -> [Int?] {
        let values = meter.extraValues
        return (0..<partitions).map { partition in
            values.first { $0.key.name == name && $0.key.label == ["partition", String(partition)] }?.value
        }
    }

    func testOnThreadsTheLagIsWhatWasSentAndIsNotDoneYet() {
        let meter = meter()
        let gauges = PartitionGauges(meter: meter, partitions: 3, onThreads: true)
        gauges.sent(1024, to: 0)
        gauges.sent(1024, to: 0)
        gauges.sent(10, to: 2)
        gauges.done(1024, by: 0)
        XCTAssertEqual(values(meter, "partition_elements_total", partitions: 3), [2048, 0, 10])
        XCTAssertEqual(values(meter, "partition_lag", partitions: 3), [1024, 0, 10])
        gauges.done(1024, by: 0)
        gauges.done(10, by: 2)
        XCTAssertEqual(values(meter, "partition_lag", partitions: 3), [0, 0, 0], "read again at each reading")
    }

    func testOnThePipelinesThreadThereIsNoLag() {
        let meter = meter()
        let gauges = PartitionGauges(meter: meter, partitions: 2, onThreads: false)
        gauges.sent(1, to: 1)
        XCTAssertEqual(values(meter, "partition_elements_total", partitions: 2), [0, 1])
        XCTAssertEqual(values(meter, "partition_lag", partitions: 2), [0, 0])
    }

    func testEachPartitionsStateIsTheBytesOfItsKeysInTheSnapshot() throws {
        let meter = meter()
        let gauges = PartitionGauges(meter: meter, partitions: 3, onThreads: true)
        var snapshot = JSONObject()
        snapshot["main#0 [p0] ops#0 dedupe"] = .array([.string("a")])
        snapshot["main#0 [p0] ops#1 scan"] = .int(42)
        snapshot["main#0 [p1] ops#0 dedupe"] = .array([])
        // partitionBy's own state, another operator's, and a partition it does not have: not counted.
        snapshot["main#0"] = .array([.string("held")])
        snapshot["main#1 [p2] ops#0 dedupe"] = .array([.string("b")])
        snapshot["main#0 [p7] ops#0 dedupe"] = .array([.string("c")])
        gauges.measureState(in: snapshot, keyPrefix: "main#0")
        XCTAssertEqual(values(meter, "partition_state_bytes", partitions: 3), [#"["a"]"#.count + 2, 2, 0])
    }

    func testAProbeMeasuresTheStatesItsOperatorsKeepAndNothingForOneNeverKept() {
        let probe = StateProbe()
        XCTAssertEqual(probe.measure(), 0)
        let kept = OperatorState<Value>()
        probe.add(kept)
        probe.add(OperatorState<Value>())
        kept.keep({ .array([.int(1)]) }, origins: { [] }, until: Lifetime())
        XCTAssertEqual(probe.measure(), "[1]".utf8.count)
    }
}
