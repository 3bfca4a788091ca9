@_spi(Components) import ReactiveTesting
import RivuletTestSupport
import XCTest

@_spi(Components) @testable import Reactive

/// Event time over lanes (a group runner's partitions): the watermark is the lowest of the lanes
/// open, so a partition read ahead of another does not make the other's elements late.
// Not leak-checked: the domain, its clock and its inputs are the test case's own properties,
// alive past each test's end.
final class EventLanesTests: XCTestCase {
    private let domain = EventTimeDomain<String>(base: TestScheduler())
    private var delivered: [String] = []
    private let lanes = EventLanes()
    private lazy var inputs = EventTimeInputs<String>(
        domain: domain, base: makeInput(), makeInput: makeInput, madeLaneInput: { _ in }, laneInputLeft: { _ in })

    /// The clock starts at the first element's time less this.
    private let maxDelay: Int64 = 60_000

    private func makeInput() -> EventTimeDomain<String>.Input {
        EventTimeDomain<String>.Input(maxDelay: maxDelay) { [unowned self] in delivered.append("\($0)") }
    }

    override func setUp() {
        super.setUp()
        domain.add(inputs.base)
    }

    /// Takes `name` at `time` as the lane's source would (its origin naming the lane); false if late.
    @discardableResult
    private func take(_ name: String, at time: Int64, from lane: EventLane?) -> Bool {
        Origin.with(LanedOrigin(lane: lane)) { inputs.withInput { domain.take(name, at: time, from: $0) } }
    }

    /// Lanes a and b (partitions 0 and 1), open.
    private func openTwoLanes() -> (EventLane, EventLane) {
        let a = EventLane(number: 0, lanes: lanes)
        let b = EventLane(number: 1, lanes: lanes)
        lanes.opened(a)
        lanes.opened(b)
        return (a, b)
    }

    func testALaneThatHasNotDeliveredHoldsTheOthersBack() {
        let (a, b) = openTwoLanes()
        // Lane a's fetch came first and ran four minutes ahead (with one input, the watermark
        // would be at 3 minutes, and b's first minute late).
        for (index, time) in [60_000, 120_000, 180_000, 240_000].enumerated() {
            XCTAssertTrue(take("a\(index)", at: Int64(time), from: a))
        }
        XCTAssertEqual(delivered, [], "b has delivered nothing yet: it holds the watermark")
        XCTAssertTrue(take("b0", at: 70_000, from: b), "not late: the watermark waited for b")
        XCTAssertTrue(take("b1", at: 190_000, from: b))
        XCTAssertEqual(delivered, ["a0", "b0", "a1"])
        XCTAssertEqual(domain.clock.clock, 130_000, "the lowest of the lanes, less maxDelay")
        // b is handed over: it holds nothing back any more.
        lanes.closed(b)
        XCTAssertEqual(delivered, ["a0", "b0", "a1", "a2"], "up to a's 180 s")
        XCTAssertFalse(take("a4", at: 170_000, from: a), "behind a's own watermark (180 s): late")
    }

    func testTheClockStartsOnlyOnceEveryLaneHasDelivered() {
        let (a, b) = openTwoLanes()
        XCTAssertTrue(take("a0", at: 3_600_000, from: a))
        XCTAssertFalse(domain.clock.isStarted, "b holds the start")
        XCTAssertTrue(take("b0", at: 0, from: b), "an hour behind a's first, and not late")
        XCTAssertTrue(domain.clock.isStarted)
        XCTAssertEqual(domain.clock.clock, -60_000, "b's time less maxDelay")
    }

    func testOneInputBeforeLanesDroppedWhatAPartitionReadBehindGave() {
        // Without lanes (elements by no lane: one input), b's element behind a's is late.
        XCTAssertTrue(take("a0", at: 60_000, from: nil))
        XCTAssertTrue(take("a1", at: 240_000, from: nil))
        XCTAssertFalse(take("b0", at: 70_000, from: nil))
    }

    func testALaneOpenedLaterHoldsFromThenAndAClosedOneLeavesTheDomain() {
        let a = EventLane(number: 0, lanes: lanes)
        lanes.opened(a)
        XCTAssertTrue(take("a0", at: 60_000, from: a))
        XCTAssertTrue(take("a1", at: 130_000, from: a))
        XCTAssertEqual(delivered, ["a0"], "the subscription's own input stands aside once lanes come")
        let c = EventLane(number: 2, lanes: lanes)
        lanes.opened(c)
        XCTAssertTrue(take("a2", at: 200_000, from: a))
        XCTAssertEqual(delivered, ["a0"], "c was taken over and holds until it delivers")
        XCTAssertTrue(take("c0", at: 125_000, from: c))
        XCTAssertEqual(delivered, ["a0"], "the watermark is c's 125 s less a minute")
        XCTAssertTrue(take("c1", at: 191_000, from: c))
        XCTAssertEqual(delivered, ["a0", "c0", "a1"])
        lanes.closed(c)
        XCTAssertEqual(delivered, ["a0", "c0", "a1"], "c1 waits for a's watermark (140 s)")
        XCTAssertEqual(inputs.byLane.count, 2, "c's input stays while an element of it waits")
        XCTAssertTrue(take("a3", at: 260_000, from: a))
        XCTAssertEqual(delivered, ["a0", "c0", "a1", "c1", "a2"])
        XCTAssertEqual(inputs.byLane.count, 1, "c's input left once nothing of it waited")
        inputs.remove()
        domain.remove(inputs.base)
    }

    func testAnElementWithoutALaneMakesTheOwnInputHoldAgain() {
        let a = EventLane(number: 0, lanes: lanes)
        lanes.opened(a)
        XCTAssertTrue(take("a0", at: 60_000, from: a))
        XCTAssertTrue(take("x0", at: 61_000, from: nil))
        XCTAssertTrue(take("a1", at: 200_000, from: a))
        XCTAssertEqual(delivered, [], "the own input took an element: it holds, at 1 s")
        XCTAssertTrue(take("x1", at: 180_000, from: nil))
        XCTAssertEqual(delivered, ["a0", "x0"], "up to the own input's 120 s")
    }

    func testTheEndOfTheSourceEndsItsLanesAndDeliversWhatWaits() {
        let (a, _) = openTwoLanes()
        XCTAssertTrue(take("a0", at: 60_000, from: a))
        var ended = false
        inputs.base.ended = { ended = true }
        inputs.endLanes()
        XCTAssertEqual(delivered, [], "the own input has not ended yet")
        domain.end(inputs.base)
        XCTAssertEqual(delivered, ["a0"])
        XCTAssertTrue(ended)
    }
}
