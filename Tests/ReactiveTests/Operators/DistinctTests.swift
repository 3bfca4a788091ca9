@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// `distinct`: each key once; with a time to live, once per period; with a bound, memory bounded.
final class DistinctTests: ReactiveTestCase {
    func testEachKeyPassesOnce() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(210, 1), next(220, 2), next(230, 1), next(240, 3), next(250, 2), completed(260),
        ])
        let res = scheduler.start { xs.distinct() }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), next(240, 3), completed(260)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 260)])
    }

    func testAKeyIsForgottenItsTimeToLiveAfterItPassed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, "a1"), next(220, "b1"), next(250, "a2"), next(290, "a3"), next(300, "a4"), next(320, "b2"),
            completed(400),
        ])
        let res = scheduler.start {
            xs.distinct(by: { $0.prefix(1) }, timeToLive: .seconds(80), scheduler: scheduler)
        }
        // a1 passed at 210: a2 (250) is a repeat and does not extend it; a3 at 290 is 80 later.
        XCTAssertEqual(
            res.events, [next(210, "a1"), next(220, "b1"), next(290, "a3"), next(320, "b2"), completed(400)])
    }

    func testABoundForgetsTheOldestKey() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1), next(220, 2), next(230, 3), next(240, 1), next(250, 3), completed(260),
        ])
        let res = scheduler.start { xs.distinct(by: { $0 }, maxKeys: 2) }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), next(230, 3), next(240, 1), completed(260)])
    }

    func testAThrowingKeySelectorAndAnErrorEndIt() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(260)])
        let res = scheduler.start {
            xs.distinct(by: { x -> Int in
                if x == 2 { throw testError }
                return x
            })
        }
        XCTAssertEqual(res.events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
        let ys = scheduler.createHotObservable([next(1210, 1), error(1220, testError2)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) { ys.distinct() }
        XCTAssertEqual(res2.events, [next(1210, 1), error(1220, testError2)])
    }

    func testManyKeysUnderABoundStayBounded() {
        let scheduler = makeScheduler()
        var events: [Recorded<Event<Int>>] = (0..<10_000).map { next(201 + $0 / 100, $0 % 3000) }
        events.append(completed(400))
        let xs = scheduler.createHotObservable(events)
        let res = scheduler.start { xs.distinct(by: { $0 }, maxKeys: 1000).toArray().map(\.count) }
        // 3000 keys cycling through a memory of 1000: every element is new again by its turn.
        XCTAssertEqual(res.events, [next(400, 10_000), completed(400)])
    }
}
