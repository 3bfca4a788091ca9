@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `concat` cases: each source in turn, the next subscribed as the one before completes.
final class ConcatTests: ReactiveTestCase {
    func testEachSourceInTurn() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createColdObservable([next(10, 1), next(20, 2), next(30, 3), completed(40)])
        let xs2 = scheduler.createColdObservable([next(10, 4), next(20, 5), completed(30)])
        let res = scheduler.start { xs1.concat(xs2) }
        XCTAssertEqual(
            res.events, [next(210, 1), next(220, 2), next(230, 3), next(250, 4), next(260, 5), completed(270)])
        XCTAssertEqual(xs1.subscriptions, [Subscription(200, 240)])
        XCTAssertEqual(xs2.subscriptions, [Subscription(240, 270)])
    }

    func testAnErrorEndsItAndTheRestIsNeverSubscribed() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createColdObservable([next(10, 1), error(20, testError)])
        let xs2 = scheduler.createColdObservable([next(10, 4), completed(30)])
        let res = scheduler.start { Observable.concat([xs1, xs2].map { $0.asObservable() }) }
        XCTAssertEqual(res.events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(xs1.subscriptions, [Subscription(200, 220)])
        XCTAssertEqual(xs2.subscriptions, [])
    }

    func testNoSourcesCompleteAtOnceAndDisposalStopsTheCurrentOne() {
        let scheduler = makeScheduler()
        let res = scheduler.start { Observable<Int>.concat([]) }
        XCTAssertEqual(res.events, [completed(200)])
        let xs1 = scheduler.createColdObservable([next(10, 1), completed(20)])
        let xs2 = scheduler.createColdObservable([next(100, 4), completed(300)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 1250) { xs1.concat(xs2) }
        XCTAssertEqual(res2.events, [next(1210, 1)])
        XCTAssertEqual(xs2.subscriptions, [Subscription(1220, 1250)])
    }
}
