@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class EventTimeSchedulerTests: ReactiveTestCase {
    func testWorkRunsWhenTheWatermarkPassesItInTimeOrderAndFIFO() {
        let base = VirtualTimeScheduler(resolution: .milliseconds(1))
        let clock = EventTimeScheduler(base: base)
        clock.start(at: 1000)
        var log: [String] = []
        clock.schedule(after: .milliseconds(20)) { log.append("b@\(clock.clock)") }
        clock.schedule(after: .milliseconds(10)) { log.append("a@\(clock.clock)") }
        clock.schedule(after: .milliseconds(20)) { log.append("c@\(clock.clock)") }
        // A part of a millisecond is rounded up: work never runs before its time.
        clock.schedule(after: .microseconds(14_001)) { log.append("d@\(clock.clock)") }
        clock.advance(to: 1012)
        XCTAssertEqual(log, ["a@1010"])
        XCTAssertEqual(clock.now, .milliseconds(1012))
        XCTAssertEqual(clock.nextDue, 1015)
        clock.advance(to: 1100)
        XCTAssertEqual(log, ["a@1010", "d@1015", "b@1020", "c@1020"])
        clock.advance(to: 900)
        XCTAssertEqual(clock.clock, 1100, "the watermark never goes back")
        XCTAssertNil(clock.nextDue)
    }

    func testWorkScheduledBeforeTheStartIsCountedFromTheFirstTime() {
        let clock = EventTimeScheduler(base: VirtualTimeScheduler())
        var ran: [Int64] = []
        clock.schedule(after: .seconds(30)) { ran.append(clock.clock) }
        let cancelled = clock.schedule(after: .seconds(1)) { ran.append(-1) }
        cancelled.dispose()
        clock.start(at: 1_795_600_800_000)
        clock.advance(to: 1_795_600_829_999)
        XCTAssertEqual(ran, [])
        clock.advance(to: 1_795_600_830_000)
        XCTAssertEqual(ran, [1_795_600_830_000])
    }

    func testImmediateWorkFromOutsideAnAdvanceRunsSoonOnTheBaseScheduler() {
        let base = VirtualTimeScheduler(resolution: .milliseconds(1))
        let clock = EventTimeScheduler(base: base)
        clock.restore(clock: 500)
        var ran: [Int64] = []
        clock.schedule { ran.append(clock.clock) }
        clock.schedule { ran.append(clock.clock + 1) }
        XCTAssertEqual(ran, [])
        base.start()
        XCTAssertEqual(ran, [500, 501])
        XCTAssertEqual(base.clock, 0, "without moving the base's clock")
    }
}
