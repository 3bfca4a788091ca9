@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class PriorityQueueTests: ReactiveTestCase {
    func testItGivesTheLeastFirstAndRemovesWhatItIsToldKeepingTheOrder() {
        var queue = PriorityQueue<(Int, String)> { $0.0 < $1.0 }
        for (key, name) in [(5, "e"), (1, "a"), (4, "d"), (2, "b"), (3, "c"), (6, "f")] { queue.push((key, name)) }
        XCTAssertEqual(queue.count, 6)
        XCTAssertEqual(queue.first?.1, "a")
        queue.removeAll { $0.0 % 2 == 0 }
        XCTAssertEqual(queue.elements.map(\.1).sorted(), ["a", "c", "e"])
        var order: [String] = []
        while let next = queue.popFirst() { order.append(next.1) }
        XCTAssertEqual(order, ["a", "c", "e"])
        XCTAssertTrue(queue.isEmpty)
    }
}
