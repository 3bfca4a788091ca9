@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class StartWithTests: ReactiveTestCase {
    func testEmitsTheValuesAtSubscriptionBeforeTheSource() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(150, 0), next(220, 3), completed(250)])
        let res = scheduler.start { xs.startWith(1, 2) }
        XCTAssertEqual(res.events, [next(200, 1), next(200, 2), next(220, 3), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testChainedStartWithEmitsTheOuterValuesFirst() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([completed(250, Int.self)])
        let res = scheduler.start { xs.startWith(1).startWith(2) }
        XCTAssertEqual(res.events, [next(200, 2), next(200, 1), completed(250)])
    }

    func testSourceErrorComesAfterTheValues() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([error(250, testError, Int.self)])
        let res = scheduler.start { xs.startWith(1) }
        XCTAssertEqual(res.events, [next(200, 1), error(250, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testDisposal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(220, 3), next(300, 4)])
        let res = scheduler.start(disposed: 250) { xs.startWith(1) }
        XCTAssertEqual(res.events, [next(200, 1), next(220, 3)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }
}
