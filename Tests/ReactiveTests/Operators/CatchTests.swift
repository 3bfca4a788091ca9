@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class CatchTests: ReactiveTestCase {
    func testContinuesWithTheFallbackInTheTickOfTheError() {
        let scheduler = makeScheduler()
        let o1 = scheduler.createHotObservable([next(150, 1), next(210, 2), next(220, 3), error(230, testError)])
        let o2 = scheduler.createHotObservable([next(240, 5), completed(250)])
        var handlerCalls: [Int] = []
        let res = scheduler.start {
            o1.catch { _ in
                handlerCalls.append(scheduler.clock)
                return o2
            }
        }
        XCTAssertEqual(res.events, [next(210, 2), next(220, 3), next(240, 5), completed(250)])
        XCTAssertEqual(o1.subscriptions, [Subscription(200, 230)])
        XCTAssertEqual(o2.subscriptions, [Subscription(230, 250)])
        XCTAssertEqual(handlerCalls, [230])
    }

    func testAThrowingHandlerFailsWithTheHandlersError() {
        let scheduler = makeScheduler()
        let o1 = scheduler.createHotObservable([next(210, 2), error(230, testError1)])
        let res = scheduler.start { o1.catch { _ -> Observable<Int> in throw testError2 } }
        XCTAssertEqual(res.events, [next(210, 2), error(230, testError2)])
        XCTAssertEqual(o1.subscriptions, [Subscription(200, 230)])
    }

    func testTheFallbacksErrorIsNotCaughtAgain() {
        let scheduler = makeScheduler()
        let o1 = scheduler.createHotObservable([error(230, testError1, Int.self)])
        let o2 = scheduler.createHotObservable([next(240, 5), error(250, testError2)])
        var calls = 0
        let res = scheduler.start {
            o1.catch { _ in
                calls += 1
                return o2
            }
        }
        XCTAssertEqual(res.events, [next(240, 5), error(250, testError2)])
        XCTAssertEqual(calls, 1)
        XCTAssertEqual(o2.subscriptions, [Subscription(230, 250)])
    }

    func testCompletionPassesWithoutCallingTheHandler() {
        let scheduler = makeScheduler()
        let o1 = scheduler.createHotObservable([next(210, 2), completed(230)])
        let res = scheduler.start { o1.catch { _ in Observable<Int>.just(9) } }
        XCTAssertEqual(res.events, [next(210, 2), completed(230)])
        XCTAssertEqual(o1.subscriptions, [Subscription(200, 230)])
    }

    func testDisposalReleasesTheFallback() {
        let scheduler = makeScheduler()
        let o1 = scheduler.createHotObservable([error(230, testError, Int.self)])
        let o2 = scheduler.createHotObservable([next(240, 5), next(400, 6)])
        let res = scheduler.start(disposed: 300) { o1.catch { _ in o2 } }
        XCTAssertEqual(res.events, [next(240, 5)])
        XCTAssertEqual(o2.subscriptions, [Subscription(230, 300)])
    }
}
