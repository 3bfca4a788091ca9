@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class TakeWhileTests: ReactiveTestCase {
    private func makeSource(_ scheduler: TestScheduler) -> TestableObservable<Int> {
        scheduler.createHotObservable([
            next(90, -1), next(110, -1), next(210, 2), next(260, 5), next(290, 13), next(320, 3), next(350, 7),
            next(390, 4), next(410, 17), completed(600),
        ])
    }

    func testCompletesAtTheFirstFailingElementAndNeverCallsThePredicateAgain() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        var calls = 0
        let res = scheduler.start {
            xs.take(while: { value in
                calls += 1
                return value != 4
            })
        }
        XCTAssertEqual(
            res.events, [next(210, 2), next(260, 5), next(290, 13), next(320, 3), next(350, 7), completed(390)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 390)])
        XCTAssertEqual(calls, 6)
    }

    func testInclusiveEmitsTheFailingElement() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start { xs.take(while: { $0 != 4 }, behavior: .inclusive) }
        XCTAssertEqual(res.events.suffix(2), [next(390, 4), completed(390)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 390)])
    }

    func testThrowingPredicateAndErrors() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start {
            xs.take(while: { value in
                if value == 13 { throw testError }
                return true
            })
        }
        XCTAssertEqual(res.events, [next(210, 2), next(260, 5), error(290, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 290)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 2), error(220, testError2)])
        let res2 = other.start { ys.take(while: { _ in true }) }
        XCTAssertEqual(res2.events, [next(210, 2), error(220, testError2)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 220)])
    }

    func testDisposal() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start(disposed: 300) { xs.take(while: { _ in true }) }
        XCTAssertEqual(res.events, [next(210, 2), next(260, 5), next(290, 13)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }
}
