@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class SkipTests: ReactiveTestCase {
    func testDropsTheFirstElements() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 0), next(210, 1), next(220, 2), next(230, 3), next(240, 4), completed(250),
        ])
        let res = scheduler.start { xs.skip(2) }
        XCTAssertEqual(res.events, [next(230, 3), next(240, 4), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testSkipZeroAndSkipMoreThanThereAre() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(250)])
        let res = scheduler.start { xs.skip(0) }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), completed(250)])
        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1), next(220, 2), completed(250)])
        let res2 = other.start { ys.skip(5) }
        XCTAssertEqual(res2.events, [completed(250)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 250)])
    }

    func testErrorPassesAndDisposal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        let res = scheduler.start { xs.skip(3) }
        XCTAssertEqual(res.events, [error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1), next(220, 2), next(300, 3)])
        let res2 = other.start(disposed: 250) { ys.skip(1) }
        XCTAssertEqual(res2.events, [next(220, 2)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 250)])
    }

    func testSkipForDurationDropsUntilTheTimerFires() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1), next(215, 2), next(220, 3), next(230, 4), completed(250),
        ])
        let res = scheduler.start { xs.skip(for: .seconds(15), scheduler: scheduler) }
        // The element at 215 arrives before the timer armed for 215 fires, so it is dropped.
        XCTAssertEqual(res.events, [next(220, 3), next(230, 4), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testSkipForDurationPassesTerminalEventsAtAnyTime() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        let res = scheduler.start { xs.skip(for: .seconds(50), scheduler: scheduler) }
        XCTAssertEqual(res.events, [error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
    }
}
