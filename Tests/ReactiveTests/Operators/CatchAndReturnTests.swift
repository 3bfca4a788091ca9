@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class CatchAndReturnTests: ReactiveTestCase {
    func testReplacesTheErrorWithAValueAndCompletion() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), error(230, testError)])
        let res = scheduler.start { xs.catchAndReturn(-1) }
        XCTAssertEqual(res.events, [next(210, 2), next(230, -1), completed(230)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 230)])
    }

    func testCompletionAndDisposalPassUnchanged() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), completed(230)])
        let res = scheduler.start { xs.catchAndReturn(-1) }
        XCTAssertEqual(res.events, [next(210, 2), completed(230)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 2), error(300, testError)])
        let res2 = other.start(disposed: 250) { ys.catchAndReturn(-1) }
        XCTAssertEqual(res2.events, [next(210, 2)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 250)])
    }
}
