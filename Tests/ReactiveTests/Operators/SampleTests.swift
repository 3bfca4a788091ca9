@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `sample` cases, with their subscription times.
final class SampleTests: ReactiveTestCase {
    private func source(_ scheduler: TestScheduler) -> TestableObservable<Int> {
        scheduler.createHotObservable([
            next(150, 1), next(220, 2), next(240, 3), next(290, 4), next(300, 5), next(310, 6), completed(400),
        ])
    }

    func testEachTickTakesTheLatestSinceTheLastOrTheDefault() {
        let scheduler = makeScheduler()
        let xs = source(scheduler)
        let ys = scheduler.createHotObservable([
            next(150, ""), next(210, "bar"), next(250, "foo"), next(260, "qux"), next(320, "baz"), completed(500),
        ])
        let res = scheduler.start { xs.sample(ys, defaultValue: 0) }
        XCTAssertEqual(
            res.events, [next(210, 0), next(250, 3), next(260, 0), next(320, 6), next(500, 0), completed(500)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 500)])
    }

    func testWithoutADefaultAQuietIntervalEmitsNothingAndTheEndWaitsForATick() {
        let scheduler = makeScheduler()
        let xs = source(scheduler)
        let ys = scheduler.createHotObservable([
            next(150, ""), next(210, "bar"), next(250, "foo"), next(260, "qux"), next(320, "baz"), next(500, "x"),
        ])
        let res = scheduler.start { xs.sample(ys) }
        XCTAssertEqual(res.events, [next(250, 3), next(320, 6), completed(500)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 500)])
    }

    func testTheSamplersErrorAndTheSourcesErrorEndItAtOnce() {
        let scheduler = makeScheduler()
        let xs = source(scheduler)
        let ys = scheduler.createHotObservable([next(210, "bar"), next(250, "foo"), error(320, testError)])
        let res = scheduler.start { xs.sample(ys) }
        XCTAssertEqual(res.events, [next(250, 3), error(320, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 320)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 320)])

        let failing = scheduler.createHotObservable([next(1220, 2), error(1300, testError2)])
        let ticks = scheduler.createHotObservable([next(1250, "t"), next(1400, "t")])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) { failing.sample(ticks) }
        XCTAssertEqual(res2.events, [next(1250, 2), error(1300, testError2)])
        XCTAssertEqual(ticks.subscriptions, [Subscription(1200, 1300)])
    }

    func testASamplerThatCompletesBeforeTheSourceLeavesTheResultOpen() {
        let scheduler = makeScheduler()
        let xs = source(scheduler)
        let ys = scheduler.createHotObservable([next(250, "foo"), completed(300, String.self)])
        let res = scheduler.start { xs.sample(ys) }
        XCTAssertEqual(res.events, [next(250, 3), next(300, 5)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
        // As in RxSwift, the sampler's subscription is released with the result's, not at its end.
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 1000)])
    }
}
