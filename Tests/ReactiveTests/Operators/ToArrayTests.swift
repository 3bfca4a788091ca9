@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `toArray` cases: one array at completion.
final class ToArrayTests: ReactiveTestCase {
    func testEveryElementInOneArrayAtCompletion() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(10, 1), next(20, 2), next(30, 3), completed(40)])
        let res = scheduler.start { xs.toArray().map { $0.map(String.init).joined(separator: ",") } }
        XCTAssertEqual(res.events, [next(240, "1,2,3"), completed(240)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 240)])
    }

    func testEmptyGivesAnEmptyArrayAndAnErrorNone() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([completed(50, Int.self)])
        let res = scheduler.start { xs.toArray().map(\.count) }
        XCTAssertEqual(res.events, [next(250, 0), completed(250)])
        let ys = scheduler.createColdObservable([next(10, 1), error(20, testError)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) { ys.toArray().map(\.count) }
        XCTAssertEqual(res2.events, [error(1220, testError)])
        XCTAssertEqual(ys.subscriptions, [Subscription(1200, 1220)])
    }

    func testEachSubscriptionCollectsAfresh() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(10, 1), completed(20)])
        let collected = xs.toArray().map(\.count)
        let observers = scheduler.subscribe(collected, at: 200, 300)
        scheduler.start()
        XCTAssertEqual(observers[0].events, [next(220, 1), completed(220)])
        XCTAssertEqual(observers[1].events, [next(320, 1), completed(320)])
    }
}
