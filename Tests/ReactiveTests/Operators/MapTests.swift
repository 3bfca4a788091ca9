@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class MapTests: ReactiveTestCase {
    func testMapTransformsEachElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(210, 0), next(220, 1), next(230, 2), next(240, 4), completed(300),
        ])
        let res = scheduler.start { xs.map { $0 * 2 } }
        XCTAssertEqual(res.events, [next(210, 0), next(220, 2), next(230, 4), next(240, 8), completed(300)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testMapForwardsError() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 0), next(220, 1), error(300, testError), next(310, 5)])
        let res = scheduler.start { xs.map { $0 + 1 } }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), error(300, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testMapDisposed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 0), next(220, 1), next(290, 2), completed(300)])
        let res = scheduler.start(disposed: 290) { xs.map { $0 * 10 } }
        XCTAssertEqual(res.events, [next(210, 0), next(220, 10), next(290, 20)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 290)])
    }

    func testThrowingSelectorReleasesSourceAtThatTick() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 0), next(220, 1), next(230, 2), completed(300)])
        let res = scheduler.start {
            xs.map { value -> Int in
                if value == 2 { throw testError }
                return value
            }
        }
        XCTAssertEqual(res.events, [next(210, 0), next(220, 1), error(230, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 230)])
    }

    func testChainedMapsStopAtTheFirstThrow() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(300)])
        let res = scheduler.start {
            xs.map { $0 * 2 }.map { value -> Int in
                if value == 4 { throw testError }
                return value + 1
            }
        }
        XCTAssertEqual(res.events, [next(210, 3), error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
    }
}
