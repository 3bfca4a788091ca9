@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class BufferTests: ReactiveTestCase {
    private func makeSource(_ scheduler: TestScheduler, end: Recorded<Event<Int>>) -> TestableObservable<Int> {
        scheduler.createHotObservable([
            next(205, 1), next(210, 2), next(240, 3), next(280, 4), next(320, 5), next(350, 6), next(370, 7),
            next(420, 8), next(470, 9), end,
        ])
    }

    func testEmitsOnCountOrTimerAndFlushesOnCompletion() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler, end: completed(600))
        let res = scheduler.start { xs.buffer(timeSpan: .seconds(70), count: 3, scheduler: scheduler) }
        XCTAssertEqual(
            res.events,
            [
                next(240, [1, 2, 3]), next(310, [4]), next(370, [5, 6, 7]), next(440, [8]), next(510, [9]),
                next(580, []), next(600, []), completed(600),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 600)])
    }

    func testErrorDiscardsTheBuffer() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler, end: error(600, testError))
        let res = scheduler.start { xs.buffer(timeSpan: .seconds(70), count: 3, scheduler: scheduler) }
        XCTAssertEqual(
            res.events,
            [
                next(240, [1, 2, 3]), next(310, [4]), next(370, [5, 6, 7]), next(440, [8]), next(510, [9]),
                next(580, []), error(600, testError),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 600)])
    }

    func testDisposal() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler, end: completed(600))
        let res = scheduler.start(disposed: 370) { xs.buffer(timeSpan: .seconds(70), count: 3, scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(240, [1, 2, 3]), next(310, [4]), next(370, [5, 6, 7])])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 370)])
    }
}
