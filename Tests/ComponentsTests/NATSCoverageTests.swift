import Pipeline
import RivuletTestSupport
import XCTest

@testable import Components

/// Which stream sequences a checkpoint holds, as a `nats` source keeps them under `--state`: the
/// server's acknowledgement floor and the sequences above it, restored as they were kept.
final class NATSCoverageTests: LeakCheckingTestCase {
    func testAPositionHoldsTheFloorAndTheSequencesAboveItAndComesBackAsItWasKept() {
        let coverage = NATSCoverage(restoring: nil)
        XCTAssertFalse(coverage.contains(1))
        coverage.cover(7)
        coverage.cover(3)
        coverage.cover(12)
        XCTAssertTrue(coverage.contains(7))
        XCTAssertFalse(coverage.contains(8))
        let position = coverage.position()
        XCTAssertEqual(position, ["floor": 0, "sequences": [3, 7, 12]])
        let resumed = NATSCoverage(restoring: position)
        XCTAssertEqual([3, 7, 8, 12].map(resumed.contains), [true, true, false, true])
    }

    func testTheServersFloorCoversEverythingBelowItAndIsNeverLowered() {
        let coverage = NATSCoverage(restoring: ["floor": 2, "sequences": [5, 9]])
        XCTAssertTrue(coverage.contains(1), "at or below the floor: acknowledged on the server")
        XCTAssertEqual(coverage.listed, 2)
        coverage.raiseFloor(to: 6)
        XCTAssertEqual(coverage.position(), ["floor": 6, "sequences": [9]], "what the floor covers is forgotten")
        XCTAssertEqual(coverage.listed, 1, "what a checkpoint lists above the floor")
        coverage.raiseFloor(to: 4)
        XCTAssertEqual(coverage.position()["floor"], 6, "a floor read before a later one does not lower it")
        coverage.cover(5)
        XCTAssertEqual(coverage.position()["sequences"], [9], "nothing at or below the floor is listed")
    }

    func testEveryConsumerKeepsItsOwnPositionAndOneNotReadKeepsTheOneItWasRestoredWith() throws {
        let positions = try NATSPositions(restoring: [
            "consumers": ["totals-p0": ["floor": 10, "sequences": [12]], "totals-p1": ["floor": 4, "sequences": []]]
        ])
        let first = positions.coverage(of: "totals-p0")
        XCTAssertTrue(first === positions.coverage(of: "totals-p0"), "one coverage a consumer in a run")
        XCTAssertTrue(first.contains(12))
        first.cover(15)
        XCTAssertEqual(
            positions.value(),
            [
                "consumers": [
                    "totals-p0": ["floor": 10, "sequences": [12, 15]], "totals-p1": ["floor": 4, "sequences": []],
                ]
            ])
    }

    func testAPartitionTakenOverStartsFromItsStoredPositionAndOneLetGoOfIsAbandoned() throws {
        let positions = try NATSPositions(restoring: ["consumers": ["totals-p0": ["floor": 10, "sequences": []]]])
        let before = positions.coverage(of: "totals-p0")
        positions.install("totals-p0", NATSCoverage(restoring: ["floor": 20, "sequences": [22]]))
        XCTAssertTrue(before.isAbandoned, "what the old coverage waited to acknowledge goes back")
        let taken = positions.coverage(of: "totals-p0")
        XCTAssertFalse(taken === before)
        XCTAssertTrue(taken.contains(22))
        XCTAssertFalse(taken.contains(21))
        positions.remove("totals-p0")
        XCTAssertTrue(taken.isAbandoned)
        XCTAssertNil(positions.existing("totals-p0"))
        XCTAssertEqual(positions.value(), ["consumers": [:]], "a partition let go of keeps no position here")
    }

    func testADamagedStoredPositionIsRefusedNamingItsConsumer() {
        let remedy = "; reset the pipeline's checkpoint to start over (rivulet state FILE --reset NAME)"
        let cases: [(Value, String)] = [
            (
                ["consumers": ["c": ["floor": -5]]],
                "the checkpoint's position of consumer 'c' has the floor -5, not a sequence from 0 to 9223372036854775806"
            ),
            (
                ["consumers": ["c": ["floor": 9_223_372_036_854_775_807]]],
                "the checkpoint's position of consumer 'c' has the floor 9223372036854775807"
            ),
            (["consumers": ["c": ["floor": "3"]]], "the checkpoint's position of consumer 'c' has the floor \"3\""),
            (
                ["consumers": ["c": ["sequences": [0]]]],
                "the checkpoint's position of consumer 'c' has 'sequences' that are not a list"
            ),
            (["consumers": ["c": [1, 2]]], "the checkpoint's position of consumer 'c' is array, not an object"),
            (["consumers": "c"], "the checkpoint's positions are string, not an object"),
        ]
        for (stored, says) in cases {
            XCTAssertThrowsError(try NATSPositions(restoring: stored), "\(stored)") { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix(says) && text.hasSuffix(remedy), text)
            }
        }
        XCTAssertNoThrow(try NATSPositions(restoring: nil), "nothing restored: a first run")
        XCTAssertNoThrow(try NATSPositions(restoring: ["consumers": ["c": ["floor": 0, "sequences": [1]]]]))
    }
}
