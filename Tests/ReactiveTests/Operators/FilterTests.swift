@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class FilterTests: ReactiveTestCase {
    private func isPrime(_ n: Int) -> Bool {
        if n <= 1 { return false }
        var i = 2
        while i * i <= n {
            if n % i == 0 { return false }
            i += 1
        }
        return true
    }

    func testFilterPassesMatchingElementsAndCompletion() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(110, 1), next(180, 2), next(230, 3), next(270, 4), next(340, 5), next(380, 6), next(390, 7),
            next(450, 8), next(470, 9), next(560, 10), next(580, 11), completed(600),
            next(610, 12), error(620, testError), completed(630),
        ])
        var invoked = 0
        let res = scheduler.start {
            xs.filter {
                invoked += 1
                return self.isPrime($0)
            }
        }
        XCTAssertEqual(res.events, [next(230, 3), next(340, 5), next(390, 7), next(580, 11), completed(600)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 600)])
        XCTAssertEqual(invoked, 9)
    }

    func testFilterForwardsErrorAndReleasesSource() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(230, 3), next(340, 5), error(600, testError), next(610, 12),
        ])
        let res = scheduler.start { xs.filter { self.isPrime($0) } }
        XCTAssertEqual(res.events, [next(230, 3), next(340, 5), error(600, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 600)])
    }

    func testFilterDisposedBeforeTheEnd() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(230, 3), next(340, 5), next(390, 7), next(450, 8), next(580, 11), completed(600),
        ])
        var invoked = 0
        let res = scheduler.start(disposed: 400) {
            xs.filter {
                invoked += 1
                return self.isPrime($0)
            }
        }
        XCTAssertEqual(res.events, [next(230, 3), next(340, 5), next(390, 7)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
        XCTAssertEqual(invoked, 3)
    }

    func testThrowingPredicateErrorsAtThatElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(230, 3), next(340, 4), next(390, 7), completed(600)])
        let res = scheduler.start {
            xs.filter { value in
                if value == 4 { throw testError }
                return true
            }
        }
        XCTAssertEqual(res.events, [next(230, 3), error(340, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 340)])
    }

    func testHotEventAtSubscribeTickIsMissedAndAtDisposeTickIsDelivered() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(200, 1), next(300, 2), next(1000, 3), next(1001, 4)])
        let res = scheduler.start { xs.filter { _ in true } }
        XCTAssertEqual(res.events, [next(300, 2), next(1000, 3)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 1000)])
    }
}
