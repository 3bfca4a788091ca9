@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class DelayTests: ReactiveTestCase {
    func testShiftsElementsAndCompletion() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(250, 2), next(350, 3), next(450, 4), completed(550),
        ])
        let res = scheduler.start { xs.delay(.seconds(100), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(350, 2), next(450, 3), next(550, 4), completed(650)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 550)])
    }

    func testErrorIsNotDelayedAndDropsWaitingElements() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(250, 2), next(350, 3), next(450, 4), error(550, testError),
        ])
        let res = scheduler.start { xs.delay(.seconds(150), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(400, 2), next(500, 3), error(550, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 550)])
    }

    func testSameTickElementsKeepTheirOrder() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(250, 1), next(250, 2), next(260, 3), completed(270)])
        let res = scheduler.start { xs.delay(.seconds(10), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(260, 1), next(260, 2), next(270, 3), completed(280)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 270)])
    }

    func testDisposalDropsEverythingPending() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(250, 2), next(350, 3), completed(400)])
        let res = scheduler.start(disposed: 400) { xs.delay(.seconds(100), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(350, 2)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }
}
