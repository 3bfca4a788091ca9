import Pipeline
import RivuletTestSupport
import XCTest

@testable import Components

final class AggregateColumnTests: LeakCheckingTestCase {
    func testAColumnGrowsKeepingItsCellsAndEmptiesKeepingItsStorage() {
        var column = AggregateColumn<Int>()
        for cell in 0..<1000 { column.append(cell) }
        column.append(-1, times: 3)
        XCTAssertEqual(column.count, 1003)
        XCTAssertEqual(column.array, Array(0..<1000) + [-1, -1, -1])
        column[999] += 1
        XCTAssertEqual(column.slice(from: 998, length: 3), [998, 1000, -1])
        column.removeAll()
        XCTAssertEqual(column.count, 0)
        column.append(contentsOf: [7, 8])
        XCTAssertEqual(column.array, [7, 8])
        XCTAssertEqual(AggregateColumn<Double>(repeating: 0.5, count: 3).array, [0.5, 0.5, 0.5])
    }

    /// A window's table is lent to each element without a retain: lent while it is the last one
    /// used, looked up again once another window was used or it was closed (and never after).
    func testAWindowLendsTheTableOfTheWindowLastUsedAndNoClosedOne() throws {
        let field = try XCTUnwrap(try? AggregateField.parse([(key: "n", value: .string("count"))]).get().first)
        let window = AggregateWindow(fields: [field], ordersByTime: false)
        let first = window.withTable(1) { ObjectIdentifier($0) }
        XCTAssertEqual(window.withTable(1) { ObjectIdentifier($0) }, first)
        let second = window.withTable(2) { ObjectIdentifier($0) }
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(window.withTable(1) { ObjectIdentifier($0) }, first)
        let closed = try XCTUnwrap(window.close(1))
        XCTAssertEqual(ObjectIdentifier(closed), first)
        XCTAssertNil(window.open[1])
        // Opened again after it closed: a table of its own, open, not the one handed back.
        window.recycle(closed)
        let reopened = window.withTable(1) { $0 }
        XCTAssertTrue(window.open[1] === reopened)
        XCTAssertEqual(Set(window.open.keys), [1, 2])
    }
}
