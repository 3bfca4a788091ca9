@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class VirtualTimeSchedulerTests: ReactiveTestCase {
    func testRunsInTimeOrderAndFIFOWithinATick() {
        let scheduler = VirtualTimeScheduler(resolution: .milliseconds(1))
        var log: [String] = []
        scheduler.scheduleAt(20) { log.append("b@\(scheduler.clock)") }
        scheduler.scheduleAt(10) { log.append("a@\(scheduler.clock)") }
        scheduler.scheduleAt(20) { log.append("c@\(scheduler.clock)") }
        scheduler.schedule(after: .milliseconds(15)) { log.append("d@\(scheduler.clock)") }
        scheduler.start()
        XCTAssertEqual(log, ["a@10", "d@15", "b@20", "c@20"])
        XCTAssertEqual(scheduler.now, .milliseconds(20))
    }

    func testCancelledActionsDoNotRunAndAdvanceStops() {
        let scheduler = VirtualTimeScheduler()
        var ran: [Int] = []
        let cancelled = scheduler.scheduleAt(5) { ran.append(5) }
        scheduler.scheduleAt(7) { ran.append(7) }
        scheduler.scheduleAt(30) { ran.append(30) }
        cancelled.dispose()
        scheduler.advance(to: 20)
        XCTAssertEqual(ran, [7])
        XCTAssertEqual(scheduler.clock, 20)
        scheduler.start()
        XCTAssertEqual(ran, [7, 30])
    }

    func testDurationsBecomeTicksOfTheResolution() {
        let scheduler = VirtualTimeScheduler(resolution: .milliseconds(10))
        XCTAssertEqual(scheduler.ticks(.seconds(1)), 100)
        XCTAssertEqual(scheduler.ticks(.milliseconds(14)), 1)
        XCTAssertEqual(scheduler.ticks(.milliseconds(15)), 2)
    }

    func testTestSchedulerMovesNowToTheNextTick() {
        let scheduler = makeScheduler()
        var at: [Int] = []
        scheduler.scheduleAt(100) {
            scheduler.schedule { at.append(scheduler.clock) }
            scheduler.scheduleAt(50) { at.append(scheduler.clock) }
        }
        scheduler.start()
        XCTAssertEqual(at, [101, 101])
    }

    func testColdEventAtOffsetZeroArrivesOneTickLate() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(0, 1), completed(5)])
        let res = scheduler.start { xs.asObservable() }
        XCTAssertEqual(res.events, [next(201, 1), completed(205)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 1000)], "nothing but the observer disposes it")
    }

    func testOpenSubscriptionsAreReported() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([next(210, 1)])
        var subscription: (any Disposable)?
        scheduler.scheduleAt(200) { subscription = xs.subscribe(scheduler.createObserver(Int.self)) }
        scheduler.start()
        XCTAssertEqual(scheduler.openSubscriptions, [Subscription(200)])
        subscription?.dispose()
        XCTAssertEqual(scheduler.openSubscriptions, [])
    }

    /// Two actions left to run at one tick are due together; a cancelled one is not counted.
    func testActionsDueTogetherAreTwoLeftToRunAtOneTick() {
        let scheduler = VirtualTimeScheduler(resolution: .milliseconds(1))
        XCTAssertFalse(scheduler.hasActionsDueTogether)
        scheduler.scheduleAt(10) {}
        let cancelled = scheduler.scheduleAt(20) {}
        XCTAssertFalse(scheduler.hasActionsDueTogether)
        scheduler.scheduleAt(20) {}
        XCTAssertTrue(scheduler.hasActionsDueTogether)
        cancelled.dispose()
        XCTAssertFalse(scheduler.hasActionsDueTogether)
        scheduler.scheduleAt(10) {}
        XCTAssertTrue(scheduler.hasActionsDueTogether)
        XCTAssertTrue(scheduler.runNext())
        XCTAssertFalse(scheduler.hasActionsDueTogether, "one of the two at 10 ran")
    }
}
