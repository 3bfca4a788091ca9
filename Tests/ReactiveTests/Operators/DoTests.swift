@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class DoTests: ReactiveTestCase {
    func testHandlersRunInOrderWithoutChangingEvents() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(250)])
        var log: [String] = []
        let res = scheduler.start {
            xs.do(
                onNext: { log.append("next \($0)") }, afterNext: { log.append("after \($0)") },
                onCompleted: { log.append("completed") }, onSubscribe: { log.append("subscribe") },
                onSubscribed: { log.append("subscribed") }, onDispose: { log.append("dispose") })
        }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), completed(250)])
        XCTAssertEqual(
            log, ["subscribe", "subscribed", "next 1", "after 1", "next 2", "after 2", "completed", "dispose"])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testThrowingOnNextBecomesAnError() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(250)])
        var errors: [TestError] = []
        let res = scheduler.start {
            xs.do(
                onNext: { if $0 == 2 { throw testError } },
                onError: { errors.append($0 as! TestError) })
        }
        XCTAssertEqual(res.events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(errors, [], "onError sees only the source's errors")
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
    }

    func testOnErrorAndOnDisposeOnDisposal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        var seen: [String] = []
        let res = scheduler.start {
            xs.do(onError: { _ in seen.append("error") }, onDispose: { seen.append("dispose") })
        }
        XCTAssertEqual(res.events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(seen, ["error", "dispose"])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1), next(300, 2)])
        var disposedAt: [Int] = []
        _ = other.start(disposed: 250) { ys.do(onDispose: { disposedAt.append(other.clock) }) }
        XCTAssertEqual(disposedAt, [250])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 250)])
    }
}
