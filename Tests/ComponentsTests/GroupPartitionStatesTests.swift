@_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@testable import Components

/// A group's partition state under `--state`: at each checkpoint each held partition's chain state
/// and position go to its entry in the bucket (compare-and-set), the rest to the runner's own
/// store; a partition taken over is claimed and its chains built again from what was stored; a
/// write refused because another runner claimed the partition drops it here.
final class GroupPartitionStatesTests: LeakCheckingTestCase {
    private final class Committed {
        var snapshots: [Value] = []
    }

    /// What the states said, from closures that must be sendable.
    private final class Said: @unchecked Sendable {
        private(set) var lines: [String] = []
        func append(_ line: String) { lines.append(line) }
    }

    private let scheduler = VirtualTimeScheduler(resolution: .milliseconds(1))

    private func makeStates(committed: Committed) -> (GroupPartitionStates, Checkpoints, MemoryLeaseBucket) {
        let checkpoints = Checkpoints(
            restored: [:], interval: .seconds(1), scheduler: scheduler,
            commit: { committed.snapshots.append($0) })
        let states = GroupPartitionStates(
            group: "totals", partitions: 2, checkpoints: checkpoints, sourceKey: "main#0 nats")
        let bucket = MemoryLeaseBucket(timeToLive: .infinity)
        states.store = bucket
        return (states, checkpoints, bucket)
    }

    func testAPartitionsConsumersAreKnownByName() {
        let (states, _, _) = makeStates(committed: Committed())
        XCTAssertTrue(states.isPartitionConsumer("totals-p3"))
        XCTAssertTrue(states.isPartitionConsumer("totals-p12-00c0ffee"))
        XCTAssertFalse(states.isPartitionConsumer("totals-px"))
        XCTAssertFalse(states.isPartitionConsumer("totals-p1-zz"))
        XCTAssertFalse(states.isPartitionConsumer("other-p1"))
        XCTAssertEqual(
            GroupPartitionStates.currentConsumers(in: [
                "partitions.2": .init(value: #"{"consumer":"totals-p2-0000beef"}"#, revision: 4),
                "partitions.3": .init(value: #"{"owner":"r"}"#, revision: 5),
            ]), [2: "totals-p2-0000beef"])
    }

    func testAChainKeyNamesItsPartition() {
        let chains = PartitionChainSet(prefix: "main#0 partitionBy", install: { _, _ in })
        XCTAssertEqual(chains.partition(ofKey: "main#0 partitionBy [p12] ops#0 aggregate"), 12)
        XCTAssertNil(chains.partition(ofKey: "main#0 partitionBy"))
        XCTAssertNil(chains.partition(ofKey: "main#1 partitionBy [p1] ops#0 scan"))
        XCTAssertNil(chains.partition(ofKey: "main#0 partitionBy [px] ops#0 scan"))
    }

    func testEachHeldPartitionsStateAndPositionAreStoredTogetherAndTheRestStaysWithTheRunner() throws {
        let committed = Committed()
        let (states, checkpoints, bucket) = makeStates(committed: committed)
        var installed: [String] = []
        states.attach(
            PartitionChainSet(prefix: "main#0 partitionBy") { partition, state in
                installed.append("p\(partition) \(state.keys.sorted())")
            })
        let claimed = try states.claim(0)
        XCTAssertEqual(claimed.position, nil, "nothing stored yet")
        XCTAssertEqual(claimed.previous, "totals-p0", "read before through the group's shared consumer, if at all")
        XCTAssertTrue(claimed.consumer.hasPrefix("totals-p0-"), "a consumer of its own: \(claimed.consumer)")
        XCTAssertTrue(states.isPartitionConsumer(claimed.consumer))
        states.take(0, state: claimed.state, revision: claimed.revision, consumer: claimed.consumer)
        checkpoints.register("main#0 partitionBy [p0] ops#0 scan") { .int(41) }
        checkpoints.register("main#0 partitionBy [p1] ops#0 scan") { .int(0) }
        checkpoints.register("main#2 file") { .int(100) }
        checkpoints.registerPosition(
            "main#0 nats",
            read: {
                [
                    "consumers": [
                        .init(claimed.consumer): ["floor": 7, "sequences": [9]],
                        "totals-p1": ["floor": 0, "sequences": []], "other": ["floor": 3, "sequences": []],
                    ]
                ]
            }, committed: {})
        checkpoints.checkpoint()
        XCTAssertEqual(
            committed.snapshots.last,
            ["main#0 nats": ["consumers": ["other": ["floor": 3, "sequences": []]]], "main#2 file": 100],
            "the partitions' state is the group's, not the runner's")
        let stored = try JSONParser.parse(try XCTUnwrap(bucket.entries()["partitions.0"]).value)
        XCTAssertEqual(stored["state"], ["main#0 partitionBy [p0] ops#0 scan": 41])
        XCTAssertEqual(stored["position"], ["floor": 7, "sequences": [9]])
        XCTAssertEqual(stored["consumer"], .string(claimed.consumer))
        XCTAssertNil(bucket.entries()["partitions.1"], "a partition not held is not written")
        // Another runner takes it over: it finds both, and its chains are built from the state.
        let (other, _, _) = makeStates(committed: Committed())
        other.store = bucket
        other.attach(
            PartitionChainSet(prefix: "main#0 partitionBy") { partition, state in
                installed.append("other p\(partition) \(state.keys.sorted())")
            })
        let taken = try other.claim(0)
        XCTAssertEqual(taken.position, ["floor": 7, "sequences": [9]])
        XCTAssertEqual(taken.previous, claimed.consumer, "its consumer is made anew, the last holder's deleted")
        XCTAssertNotEqual(taken.consumer, claimed.consumer)
        other.take(0, state: taken.state, revision: taken.revision, consumer: taken.consumer)
        XCTAssertEqual(installed, ["p0 []", "other p0 [\"main#0 partitionBy [p0] ops#0 scan\"]"])
        // The first runner, stale, fails its next write of the partition and drops it.
        let said = Said()
        states.report = { said.append($0) }
        states.stopReading = { said.append("stop reading \($0)") }
        checkpoints.checkpoint()
        let reports = said.lines
        XCTAssertEqual(reports.last, "stop reading 0")
        XCTAssertEqual(installed.last, "p0 []", "its chain starts empty")
        XCTAssertTrue(reports.first?.contains("another runner holds it now") == true, "\(reports)")
        let after = try JSONParser.parse(try XCTUnwrap(bucket.entries()["partitions.0"]).value)
        XCTAssertEqual(after["owner"], .string(other.runner), "the stale write did not land")
    }
}
