@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class DistinctUntilChangedTests: ReactiveTestCase {
    func testDropsConsecutiveDuplicates() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(210, 2), next(215, 3), next(220, 3), next(225, 2), next(230, 2), next(230, 1),
            next(240, 2), completed(250),
        ])
        let res = scheduler.start { xs.distinctUntilChanged() }
        XCTAssertEqual(
            res.events, [next(210, 2), next(215, 3), next(225, 2), next(230, 1), next(240, 2), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testValuesSeenBeforeSubscriptionDoNotCount() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(150, 2), next(210, 2), next(220, 2), completed(250)])
        let res = scheduler.start { xs.distinctUntilChanged() }
        XCTAssertEqual(res.events, [next(210, 2), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testKeySelectorEmitsTheOriginalElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, "bar"), next(220, "baz"), next(230, "quux"), next(240, "qux"), completed(250),
        ])
        let res = scheduler.start { xs.distinctUntilChanged { $0.count } }
        XCTAssertEqual(res.events, [next(210, "bar"), next(230, "quux"), next(240, "qux"), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testComparerAlwaysEqualLetsOnlyTheFirstThrough() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), next(220, 3), next(230, 4), completed(250)])
        var calls = 0
        let res = scheduler.start {
            xs.distinctUntilChanged { _, _ in
                calls += 1
                return true
            }
        }
        XCTAssertEqual(res.events, [next(210, 2), completed(250)])
        XCTAssertEqual(calls, 2, "the first element is never compared")
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testComparesWithTheLastEmittedNotTheLastReceived() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), next(230, 3), next(240, 4), completed(250)])
        // Not transitive: "equal" when the difference is at most 1.
        let res = scheduler.start { xs.distinctUntilChanged { abs($0 - $1) <= 1 } }
        XCTAssertEqual(res.events, [next(210, 1), next(230, 3), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testThrowingKeySelectorAndComparer() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), next(220, 3), completed(250)])
        let res = scheduler.start { xs.distinctUntilChanged { (_: Int) -> Int in throw testError } }
        XCTAssertEqual(res.events, [error(210, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 210)])

        let ys = scheduler.createHotObservable([next(1210, 2), next(1220, 3), completed(1250)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            ys.distinctUntilChanged { (_: Int, _: Int) -> Bool in throw testError2 }
        }
        XCTAssertEqual(res2.events, [next(1210, 2), error(1220, testError2)])
        XCTAssertEqual(ys.subscriptions, [Subscription(1200, 1220)])
    }

    func testErrorAndDisposal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), error(230, testError), next(240, 3)])
        let res = scheduler.start { xs.distinctUntilChanged() }
        XCTAssertEqual(res.events, [next(210, 2), error(230, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 230)])

        let ys = scheduler.createHotObservable([next(1210, 2), next(1300, 3)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 1250) { ys.distinctUntilChanged() }
        XCTAssertEqual(res2.events, [next(1210, 2)])
        XCTAssertEqual(ys.subscriptions, [Subscription(1200, 1250)])
    }
}
