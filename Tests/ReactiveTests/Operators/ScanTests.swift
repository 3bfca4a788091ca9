@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class ScanTests: ReactiveTestCase {
    func testSeedIsNeverEmittedAlone() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(150, 1), completed(250, Int.self)])
        let res = scheduler.start { xs.scan(42, accumulator: +) }
        XCTAssertEqual(res.events, [completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testEmitsEachAccumulatedValue() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(210, 2), next(220, 3), next(230, 4), next(240, 5), completed(250),
        ])
        let res = scheduler.start { xs.scan(42, accumulator: +) }
        XCTAssertEqual(res.events, [next(210, 44), next(220, 47), next(230, 51), next(240, 56), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testScanIntoMutatesInPlace() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), next(220, 3), completed(250)])
        let res = scheduler.start { xs.scan(into: [Int]()) { acc, x in acc.append(x) }.map { $0.count } }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testErrorAndThrowingAccumulator() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), next(220, 3), next(230, 4), completed(250)])
        let res = scheduler.start {
            xs.scan(0) { acc, x in
                if x == 3 { throw testError }
                return acc + x
            }
        }
        XCTAssertEqual(res.events, [next(210, 2), error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])

        let ys = scheduler.createHotObservable([next(1210, 2), error(1220, testError2)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) { ys.scan(0, accumulator: +) }
        XCTAssertEqual(res2.events, [next(1210, 2), error(1220, testError2)])
        XCTAssertEqual(ys.subscriptions, [Subscription(1200, 1220)])
    }

    func testEachSubscriptionStartsFromTheSeed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(10, 1), next(20, 2), completed(30)])
        let scanned = xs.scan(0, accumulator: +)
        let observers = scheduler.subscribe(scanned, at: 200, 300)
        scheduler.start()
        XCTAssertEqual(observers[0].events, [next(210, 1), next(220, 3), completed(230)])
        XCTAssertEqual(observers[1].events, [next(310, 1), next(320, 3), completed(330)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 230), Subscription(300, 330)])
    }

    func testDisposed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), next(220, 3), next(230, 4), completed(250)])
        let res = scheduler.start(disposed: 225) { xs.scan(0, accumulator: +) }
        XCTAssertEqual(res.events, [next(210, 2), next(220, 5)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 225)])
    }
}
