@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class CompactMapTests: ReactiveTestCase {
    func testDropsNilResults() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, "1"), next(220, "x"), next(230, "3"), completed(300),
        ])
        let res = scheduler.start { xs.compactMap { Int($0) } }
        XCTAssertEqual(res.events, [next(210, 1), next(230, 3), completed(300)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testForwardsErrorAndThrowingTransform() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(300)])
        let res = scheduler.start {
            xs.compactMap { value -> Int? in
                if value == 2 { throw testError2 }
                return value
            }
        }
        XCTAssertEqual(res.events, [next(210, 1), error(220, testError2)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1), error(250, testError)])
        let res2 = other.start { ys.compactMap { $0 } }
        XCTAssertEqual(res2.events, [next(210, 1), error(250, testError)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 250)])
    }

    func testDisposed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(300, 2), completed(400)])
        let res = scheduler.start(disposed: 250) { xs.compactMap { $0 } }
        XCTAssertEqual(res.events, [next(210, 1)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }
}
