@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class ThrottleTests: ReactiveTestCase {
    private func makeSource(_ scheduler: TestScheduler) -> TestableObservable<Int> {
        scheduler.createHotObservable([
            next(150, 1), next(210, 2), next(250, 3), next(310, 4), next(350, 5), next(410, 6), next(450, 7),
            completed(500),
        ])
    }

    func testLatestFalseDropsElementsInsideTheWindow() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start { xs.throttle(.seconds(200), latest: false, scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 2), next(410, 6), completed(500)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 500)])
    }

    func testBoundaryElementPreemptsThePendingOneAndCompletionWaitsForTheTrailingElement() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start { xs.throttle(.seconds(200), scheduler: scheduler) }
        // 5 (pending since 350) is lost to 6, which arrives exactly at the window's end.
        XCTAssertEqual(res.events, [next(210, 2), next(410, 6), next(610, 7), completed(610)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 500)], "the source is released when it completes")
    }

    func testTrailingEmissionStartsTheNextWindow() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(250, 2), next(420, 3), completed(700)])
        let res = scheduler.start { xs.throttle(.seconds(200), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), next(410, 2), next(610, 3), completed(700)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 700)])
    }

    func testCompletionWithoutPendingElementIsImmediate() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(600, 2), completed(900)])
        let res = scheduler.start { xs.throttle(.seconds(200), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), next(600, 2), completed(900)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 900)])
    }

    func testErrorDropsThePendingElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(250, 2), error(300, testError)])
        let res = scheduler.start { xs.throttle(.seconds(200), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), error(300, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testDisposalBeforeTheDeferredTimerLosesElementAndCompletion() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start(disposed: 550) { xs.throttle(.seconds(200), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 2), next(410, 6)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 500)])
    }
}
