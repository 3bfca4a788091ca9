@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `reduce` cases: the total comes only at completion, then completion in that tick.
final class ReduceTests: ReactiveTestCase {
    func testAnEmptySourceGivesTheSeed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(150, 1), completed(250, Int.self)])
        let res = scheduler.start { xs.reduce(42, accumulator: +) }
        XCTAssertEqual(res.events, [next(250, 42), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testTheTotalAndMapResultComeAtCompletion() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(210, 0), next(220, 1), next(230, 2), next(240, 3), next(250, 4), completed(260),
        ])
        let res = scheduler.start { xs.reduce(42, accumulator: +, mapResult: { $0 * 5 }) }
        XCTAssertEqual(res.events, [next(260, (42 + 0 + 1 + 2 + 3 + 4) * 5), completed(260)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 260)])
    }

    func testAnErrorGivesNoTotal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), error(250, testError)])
        let res = scheduler.start { xs.reduce(42, accumulator: +) }
        XCTAssertEqual(res.events, [error(250, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testANeverEndingSourceGivesNothing() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(150, 1), next(210, 2)])
        let res = scheduler.start { xs.reduce(42, accumulator: +) }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 1000)])
    }

    func testAThrowingAccumulatorOrMapResultEndsItWithTheError() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 0), next(220, 1), next(230, 2), completed(260)])
        let res = scheduler.start {
            xs.reduce(0) { total, x in
                if x == 1 { throw testError }
                return total + x
            }
        }
        XCTAssertEqual(res.events, [error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])

        let ys = scheduler.createHotObservable([next(1210, 1), completed(1260)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            ys.reduce(0, accumulator: +, mapResult: { _ -> Int in throw testError2 })
        }
        XCTAssertEqual(res2.events, [error(1260, testError2)])
        XCTAssertEqual(ys.subscriptions, [Subscription(1200, 1260)])
    }

    func testDisposedBeforeCompletionGivesNothing() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), completed(300)])
        let res = scheduler.start(disposed: 250) { xs.reduce(0, accumulator: +) }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }
}
