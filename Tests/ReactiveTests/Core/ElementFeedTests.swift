@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// `subscribe(feeding:in:)`: each event of the stream becomes one of the feed's calls.
final class ElementFeedTests: ReactiveTestCase {
    private final class Calls: ElementFeed {
        var log: [String] = []
        func take(_ element: Int) { log.append("take \(element)") }
        func fail(_ error: any Error) { log.append("fail \(error)") }
        func complete() { log.append("complete") }
    }

    func testEachEventBecomesTheFeedsCallAndTheLifetimeEndsTheSubscription() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(230)])
        let calls = Calls()
        let lifetime = Lifetime()
        _ = scheduler.scheduleAt(200) { xs.subscribe(feeding: calls, in: lifetime) }
        scheduler.start()
        XCTAssertEqual(calls.log, ["take 1", "take 2", "complete"])
        lifetime.dispose()

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1), error(220, TestError(3)), next(230, 4)])
        let failed = Calls()
        let held = Lifetime()
        _ = other.scheduleAt(200) { ys.subscribe(feeding: failed, in: held) }
        _ = other.scheduleAt(215) { held.dispose() }
        other.start()
        XCTAssertEqual(failed.log, ["take 1"], "disposed at 215: nothing after")
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 215)])
    }
}
