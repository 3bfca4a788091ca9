import Pipeline
import RivuletTestSupport
import XCTest

@testable import Components

/// `OrderedResults`: what partitions on threads emit, held until no partition can emit one before
/// it, then passed on in the one-thread order.
final class PartitionOrderTests: LeakCheckingTestCase {
    private func place(_ end: Int64, _ time: Int64, _ sequence: Int64) -> ResultPlace {
        ResultPlace(end: end, time: time, sequence: sequence)
    }

    /// A window's results wait until every partition has done the clock past its end, then go by
    /// their keys' earliest time and number in the stream, whichever partition made them.
    func testResultsWaitForEveryPartitionAndGoInTheOneThreadOrder() {
        var results = OrderedResults(partitions: 2)
        results.add(
            [.string("b"), .string("d")], at: [place(60_000, 5, 1), place(60_000, 7, 3)], from: 1, doneUpTo: 60_001)
        XCTAssertEqual(results.released().map(\.value), [], "partition 0 has not done the clock past the window")
        results.add([.string("a")], at: [place(60_000, 5, 0)], from: 0, doneUpTo: 30_000)
        XCTAssertEqual(results.released().map(\.value), [])
        results.add([.string("c")], at: [place(60_000, 6, 2)], from: 0, doneUpTo: 60_000)
        XCTAssertEqual(results.released().map(\.value), [], "a window ending at 60,000 may still close at 60,000")
        results.add([], at: [], from: 0, doneUpTo: 60_001)
        XCTAssertEqual(results.released().map(\.value), [.string("a"), .string("b"), .string("c"), .string("d")])
        XCTAssertEqual(results.count, 0)
    }

    /// Later windows wait behind earlier ones; what is left goes once every partition completed.
    func testLaterWindowsWaitAndTheEndReleasesEverything() {
        var results = OrderedResults(partitions: 2)
        results.add([.int(2)], at: [place(120_000, 0, 9)], from: 0, doneUpTo: 130_000)
        results.add([.int(1)], at: [place(60_000, 0, 4)], from: 1, doneUpTo: 70_000)
        XCTAssertEqual(results.released().map(\.value), [.int(1)])
        XCTAssertEqual(results.heldInOrder, [.int(2)], "kept by a checkpoint, in order")
        results.add([.int(3)], at: [.last], from: 1, doneUpTo: nil)
        results.completed(1)
        XCTAssertEqual(
            results.released().map(\.value), [.int(2)], "partition 1 completed: only the windows partition 0 closed")
        results.completed(0)
        XCTAssertEqual(results.released().map(\.value), [.int(3)])
    }
}
