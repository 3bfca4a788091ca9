@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class DebounceTests: ReactiveTestCase {
    func testEmitsAfterAQuietPeriod() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(210, 2), next(250, 3), next(280, 4), next(400, 5), completed(500),
        ])
        let res = scheduler.start { xs.debounce(.seconds(20), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(230, 2), next(270, 3), next(300, 4), next(420, 5), completed(500)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 500)])
    }

    func testElementOnTheTimerTickReplacesThePendingOne() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(230, 2), next(250, 3), completed(400)])
        let res = scheduler.start { xs.debounce(.seconds(20), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(270, 3), completed(400)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }

    func testCompletionFlushesThePendingElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(390, 7), completed(400)])
        let res = scheduler.start { xs.debounce(.seconds(20), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(230, 1), next(400, 7), completed(400)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }

    func testErrorDropsThePendingElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(300, 2), error(310, testError)])
        let res = scheduler.start { xs.debounce(.seconds(20), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(230, 1), error(310, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 310)])
    }

    func testDisposalDropsThePendingElementAndTimer() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(300, 2), completed(500)])
        let res = scheduler.start(disposed: 310) { xs.debounce(.seconds(20), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(230, 1)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 310)])
        XCTAssertFalse(scheduler.hasPendingWork)
    }

    func testEmptyAndNever() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([completed(300, Int.self)])
        let ys = scheduler.createHotObservable([next(150, 1)])
        let res = scheduler.start { xs.debounce(.seconds(20), scheduler: scheduler) }
        XCTAssertEqual(res.events, [completed(300)])
        let other = makeScheduler()
        let zs = other.createHotObservable([next(150, 1)])
        let res2 = other.start { zs.debounce(.seconds(20), scheduler: other) }
        XCTAssertEqual(res2.events, [])
        XCTAssertEqual(zs.subscriptions, [Subscription(200, 1000)])
        XCTAssertEqual(ys.subscriptions, [])
    }
}
