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

    /// The values given are moved in: the array is left holding nulls (freed where it was made),
    /// and what comes out is the only reference.
    func testResultsAreMovedInAndOut() {
        var results = OrderedResults(partitions: 1)
        let object: Value = ["a": .string(String(repeating: "x", count: 40))]
        var given = [object]
        results.add(&given, at: [place(1, 0, 0)], from: 0, doneUpTo: 2)
        XCTAssertEqual(given, [.null])
        XCTAssertEqual(results.released().map(\.value), [object])
    }

    /// Many partitions, results of random windows and marks, long queues (past the 1,024 where a
    /// queue's front is cut off): what comes out is what sorting everything released would give,
    /// released as soon as every partition has done the clock past its window.
    func testAnyInterleavingReleasesWhatSortingWould() {
        var generator = SplitMix(seed: 7)
        for round in 0..<20 {
            let partitions = 1 + round % 6
            var results = OrderedResults(partitions: partitions)
            var held: [(ResultPlace, Value)] = []
            var done = Array(repeating: Int64.min, count: partitions)
            var windows = Array(repeating: Int64(0), count: partitions)
            var sequence: Int64 = 0
            var released: [Value] = []
            var expected: [Value] = []
            for _ in 0..<300 {
                let partition = Int.random(in: 0..<partitions, using: &generator)
                var values: [Value] = []
                var places: [ResultPlace] = []
                // A partition's next results are of later windows than those it emitted before.
                windows[partition] += 1
                for _ in 0..<Int.random(in: 0..<12, using: &generator) {
                    windows[partition] += Int64.random(in: 0...1, using: &generator)
                    let place = ResultPlace(
                        end: windows[partition] * 10, time: Int64.random(in: 0..<3, using: &generator),
                        sequence: sequence)
                    sequence += 1
                    values.append(.int(Int(sequence)))
                    places.append(place)
                }
                // Within a partition, places come in order (windows by their end, keys by place).
                let order = places.indices.sorted { places[$0] < places[$1] }
                places = order.map { places[$0] }
                let given = order.map { values[$0] }
                values = given
                held += zip(places, given)
                let mark = max(done[partition], windows[partition] * 10 + Int64.random(in: -5...5, using: &generator))
                done[partition] = mark
                results.add(&values, at: places, from: partition, doneUpTo: mark)
                released += results.released().map(\.value)
                let lowest = done.min()!
                held.sort { $0.0 < $1.0 }
                while let first = held.first, first.0.end < lowest {
                    expected.append(first.1)
                    held.removeFirst()
                }
                XCTAssertEqual(released, expected, "round \(round)")
            }
            for partition in 0..<partitions { results.completed(partition) }
            released += results.released().map(\.value)
            expected += held.sorted { $0.0 < $1.0 }.map(\.1)
            XCTAssertEqual(released, expected, "round \(round), at the end")
            XCTAssertEqual(results.count, 0)
        }
    }
}

extension OrderedResults {
    fileprivate mutating func add(
        _ values: [Value], at places: [ResultPlace], from partition: Int, doneUpTo mark: Int64?
    ) {
        var moved = values
        add(&moved, at: places, from: partition, doneUpTo: mark)
    }
}
