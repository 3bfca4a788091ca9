@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class TimeoutTests: ReactiveTestCase {
    func testElementOnTheDeadlineTickWins() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(230, 1), next(260, 2), next(290, 3), completed(320)])
        let res = scheduler.start { xs.timeout(.seconds(30), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(230, 1), next(260, 2), next(290, 3), completed(320)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 320)])
    }

    func testTimesOutCountingFromTheLastElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(260, 2), completed(300)])
        let res = scheduler.start { xs.timeout(.seconds(30), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), error(240, RxError.timeout)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 240)])
    }

    func testTimesOutCountingFromSubscription() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(250, 1)])
        let res = scheduler.start { xs.timeout(.seconds(30), scheduler: scheduler) }
        XCTAssertEqual(res.events, [error(230, RxError.timeout)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 230)])
    }

    func testSwitchesToOtherAndIgnoresTheSource() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(260, 2), completed(300)])
        let ys = scheduler.createColdObservable([next(10, 100), completed(50)])
        let res = scheduler.start { xs.timeout(.seconds(30), other: ys, scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), next(250, 100), completed(290)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 240)])
        XCTAssertEqual(ys.subscriptions, [Subscription(240, 290)])
    }

    func testErrorAndCompletionCancelTheTimer() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        let res = scheduler.start { xs.timeout(.seconds(30), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
    }

    func testDisposal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(230, 2)])
        let res = scheduler.start(disposed: 235) { xs.timeout(.seconds(30), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), next(230, 2)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 235)])
    }
}
