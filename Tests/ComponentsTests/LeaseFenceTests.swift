import Reactive
import RivuletTestSupport
import XCTest

@testable import Components

/// The fence a partition's reader delivers behind, on a clock the test sets.
final class LeaseFenceTests: LeakCheckingTestCase {
    private let fence = LeaseFence(leaseTimeout: .seconds(3))

    func testNothingIsDeliveredBeforeARoundVouchedForTheLease() {
        XCTAssertEqual(fence.verdict(0, at: .zero), .notHeld)
    }

    func testARoundVouchesForTwoThirdsOfTheLeaseTimeoutFromItsStart() {
        fence.vouch(for: [0, 2], roundStartedAt: .seconds(10))
        XCTAssertEqual(fence.verdict(0, at: .seconds(10)), .deliver)
        XCTAssertEqual(fence.verdict(2, at: .milliseconds(11_999)), .deliver)
        XCTAssertEqual(fence.verdict(2, at: .seconds(12)), .stale, "a runner that stalled past 2 s of a 3 s lease")
        XCTAssertEqual(fence.verdict(1, at: .seconds(10)), .notHeld, "another runner's partition")
    }

    func testTheNextRoundVouchesAgainForWhatItStillHolds() {
        fence.vouch(for: [0, 1], roundStartedAt: .seconds(10))
        XCTAssertEqual(fence.verdict(0, at: .seconds(13)), .stale)
        // The round after the stall found partition 0 lost and renewed 1.
        fence.vouch(for: [1], roundStartedAt: .seconds(13))
        XCTAssertEqual(fence.verdict(0, at: .seconds(13)), .notHeld)
        XCTAssertEqual(fence.verdict(1, at: .seconds(13)), .deliver)
    }
}
