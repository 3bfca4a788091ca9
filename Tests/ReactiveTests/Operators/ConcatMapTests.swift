@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class ConcatMapTests: ReactiveTestCase {
    func testRunsInnersOneAfterAnother() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), next(400, 1), completed(500)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), completed(460)])
        let ys1 = scheduler.createColdObservable([next(20, "b"), completed(100)])
        let inners = [ys0, ys1]
        let res = scheduler.start { xs.concatMap { inners[$0] } }
        XCTAssertEqual(res.events, [next(310, "a"), next(780, "b"), completed(860)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 500)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 760)])
        XCTAssertEqual(ys1.subscriptions, [Subscription(760, 860)], "the next inner starts in the same tick")
    }

    func testSelectorRunsOnArrivalSoItFailsWhileAnEarlierInnerRuns() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), next(550, 1), completed(900)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), completed(460)])
        var calls: [Int] = []
        let res = scheduler.start {
            xs.concatMap { index -> TestableObservable<String> in
                calls.append(scheduler.clock)
                if index == 1 { throw testError }
                return ys0
            }
        }
        XCTAssertEqual(res.events, [next(310, "a"), error(550, testError)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 550)])
        XCTAssertEqual(calls, [300, 550])
    }

    func testOuterErrorReleasesTheActiveInner() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), error(400, testError)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), completed(460)])
        let res = scheduler.start { xs.concatMap { _ in ys0 } }
        XCTAssertEqual(res.events, [next(310, "a"), error(400, testError)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 400)])
    }

    func testAnInnerThatNeverEndsKeepsTheResultOpen() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), next(400, 1), completed(500)])
        let ys0 = scheduler.createColdObservable([next(10, "a")])
        let ys1 = scheduler.createColdObservable([next(10, "b"), completed(20)])
        let inners = [ys0, ys1]
        let res = scheduler.start { xs.concatMap { inners[$0] } }
        XCTAssertEqual(res.events, [next(310, "a")])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 1000)])
        XCTAssertEqual(ys1.subscriptions, [])
    }
}
