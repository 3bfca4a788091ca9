import RivuletTestSupport
import XCTest

@testable import Components

final class DeliveryGapCheckTests: LeakCheckingTestCase {
    func testDeliveriesInTurnHaveNoGap() {
        var check = DeliveryGapCheck()
        XCTAssertNil(check.firstAfterLostDeliveries([7, 8, 9]))
        XCTAssertNil(check.firstAfterLostDeliveries([10]))
        XCTAssertEqual(check.last, 10)
    }

    func testASkippedNumberIsAGapAtTheFirstMessageAfterIt() throws {
        var check = DeliveryGapCheck()
        XCTAssertNil(check.firstAfterLostDeliveries([1, 2]))
        let gap = try XCTUnwrap(check.firstAfterLostDeliveries([3, 4, 8, 9]))
        XCTAssertEqual(gap.index, 2)
        XCTAssertEqual(gap.lost, 5...7)
        XCTAssertEqual(check.last, 4, "follows the deliveries before the gap only")
    }

    func testAGapBetweenBatchesIsAtTheFirstMessage() throws {
        var check = DeliveryGapCheck()
        XCTAssertNil(check.firstAfterLostDeliveries([1]))
        let gap = try XCTUnwrap(check.firstAfterLostDeliveries([3]))
        XCTAssertEqual(gap.index, 0)
        XCTAssertEqual(gap.lost, 2...2)
    }

    /// A new consumer leader delivering again what the old one delivered: copies, not a gap.
    func testNumbersGoingBackAreNoGap() {
        var check = DeliveryGapCheck()
        XCTAssertNil(check.firstAfterLostDeliveries([10, 11, 12]))
        XCTAssertNil(check.firstAfterLostDeliveries([11, 12, 13]))
        XCTAssertEqual(check.last, 13)
    }

    /// The first delivery a reader sees sets where it starts; unreadable numbers are skipped.
    func testTheFirstDeliveryStartsTheCountAndZeroIsSkipped() {
        var check = DeliveryGapCheck()
        XCTAssertNil(check.firstAfterLostDeliveries([42, 0, 43]))
        XCTAssertEqual(check.last, 43)
    }
}
