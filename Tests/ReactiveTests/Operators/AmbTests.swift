@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `amb` cases: the first event of any kind chooses the source.
final class AmbTests: ReactiveTestCase {
    func testNeitherEmitsSoNothingDoes() {
        let scheduler = makeScheduler()
        let x1 = scheduler.createHotObservable([next(150, 1)])
        let x2 = scheduler.createHotObservable([next(150, 2)])
        let res = scheduler.start { x1.amb(x2) }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(x1.subscriptions, [Subscription(200, 1000)])
        XCTAssertEqual(x2.subscriptions, [Subscription(200, 1000)])
    }

    func testTheFirstToEmitWinsAndTheOtherIsDisposedThen() {
        let scheduler = makeScheduler()
        let x1 = scheduler.createHotObservable([next(150, 1), next(210, 2), next(240, 3), completed(250)])
        let x2 = scheduler.createHotObservable([next(150, 1), next(220, 4), next(230, 5), completed(250)])
        let res = scheduler.start { x1.amb(x2) }
        XCTAssertEqual(res.events, [next(210, 2), next(240, 3), completed(250)])
        XCTAssertEqual(x1.subscriptions, [Subscription(200, 250)])
        XCTAssertEqual(x2.subscriptions, [Subscription(200, 210)])
    }

    func testAnErrorOrACompletionWinsToo() {
        let scheduler = makeScheduler()
        let x1 = scheduler.createHotObservable([next(220, 2), completed(250)])
        let x2 = scheduler.createHotObservable([error(210, testError, Int.self)])
        let res = scheduler.start { x1.amb(x2) }
        XCTAssertEqual(res.events, [error(210, testError)])
        XCTAssertEqual(x1.subscriptions, [Subscription(200, 210)])
        XCTAssertEqual(x2.subscriptions, [Subscription(200, 210)])

        let y1 = scheduler.createHotObservable([next(1220, 2)])
        let y2 = scheduler.createHotObservable([completed(1210, Int.self)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            Observable.amb([y1, y2].map { $0.asObservable() })
        }
        XCTAssertEqual(res2.events, [completed(1210)])
        XCTAssertEqual(y1.subscriptions, [Subscription(1200, 1210)])
    }

    func testASourceThatEmitsWhileSubscribedWinsAndLaterOnesAreLetGoAtOnce() {
        let scheduler = makeScheduler()
        let x2 = scheduler.createColdObservable([next(10, 9)])
        let res = scheduler.start { Observable.amb([Observable.just(1), x2.asObservable()]) }
        XCTAssertEqual(res.events, [next(200, 1), completed(200)])
        XCTAssertEqual(x2.subscriptions, [Subscription(200, 200)])
    }

    func testNoSourcesNeverEmit() {
        let scheduler = makeScheduler()
        let res = scheduler.start { Observable<Int>.amb([]) }
        XCTAssertEqual(res.events, [])
    }
}
