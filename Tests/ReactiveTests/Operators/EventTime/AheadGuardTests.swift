import RivuletTestSupport
import XCTest

@_spi(Components) @testable import Reactive

/// `eventTime`'s `maxAhead` for one input: a candidate far ahead, and what the next element says of it.
final class AheadGuardTests: LeakCheckingTestCase {
    func testAnElementFarAheadWaitsAndIsRefusedWhenTheNextIsFarBehindIt() {
        let guardian = AheadGuard<Int>(maxAhead: 1000)
        XCTAssertTrue(guardian.consider(1, at: 0, origin: nil).takeNow, "the first is taken: nothing to judge it by")
        XCTAssertTrue(guardian.consider(2, at: 1000, origin: nil).takeNow, "exactly maxAhead ahead is taken")
        let ahead = guardian.consider(3, at: 253_402_300_799_000, origin: nil)
        XCTAssertFalse(ahead.takeNow)
        XCTAssertNil(ahead.before)
        let next = guardian.consider(4, at: 1500, origin: nil)
        XCTAssertTrue(next.takeNow)
        guard case .refused(let held)? = next.before else { return XCTFail("\(String(describing: next.before))") }
        XCTAssertEqual(held.element, 3)
        XCTAssertNil(guardian.candidate)
    }

    func testAJumpTheNextElementFollowsGoesOnFirst() {
        let guardian = AheadGuard<Int>(maxAhead: 1000, latest: 500)
        XCTAssertFalse(guardian.consider(1, at: 100_000, origin: nil).takeNow)
        let next = guardian.consider(2, at: 99_000, origin: nil)
        XCTAssertTrue(next.takeNow, "within maxAhead of the candidate: time did jump")
        guard case .confirmed(let held)? = next.before else { return XCTFail("\(String(describing: next.before))") }
        XCTAssertEqual(held.time, 100_000)
        XCTAssertTrue(guardian.consider(3, at: 100_500, origin: nil).takeNow, "judged from the jump on")
    }

    func testTheEndLetsACandidateGoOnAndTimesAtTheEdgesDoNotOverflow() {
        let guardian = AheadGuard<Int>(maxAhead: .max, latest: .max)
        XCTAssertTrue(guardian.consider(1, at: .min, origin: nil).takeNow)
        let edge = AheadGuard<Int>(maxAhead: 10, latest: 0)
        XCTAssertFalse(edge.consider(1, at: .max, origin: nil).takeNow)
        XCTAssertEqual(edge.end()?.time, .max)
        XCTAssertNil(edge.end())
    }
}
