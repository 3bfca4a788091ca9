@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class TakeTests: ReactiveTestCase {
    private func makeSource(_ scheduler: TestScheduler) -> TestableObservable<Int> {
        scheduler.createHotObservable([
            next(70, 6), next(150, 4), next(210, 9), next(230, 13), next(270, 7), next(280, 1), next(300, -1),
            completed(690),
        ])
    }

    func testCompletesWithTheLastTakenElement() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start { xs.take(3) }
        XCTAssertEqual(res.events, [next(210, 9), next(230, 13), next(270, 7), completed(270)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 270)])
    }

    func testTakeZeroNeverSubscribes() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start { xs.take(0) }
        XCTAssertEqual(res.events, [completed(200)])
        XCTAssertEqual(xs.subscriptions, [])
    }

    func testFewerElementsPassTheTerminalEvent() {
        let scheduler = makeScheduler()
        let xs = makeSource(scheduler)
        let res = scheduler.start { xs.take(20) }
        XCTAssertEqual(
            res.events, [next(210, 9), next(230, 13), next(270, 7), next(280, 1), next(300, -1), completed(690)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 690)])
    }

    func testErrorAndDisposal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 9), error(220, testError)])
        let res = scheduler.start { xs.take(3) }
        XCTAssertEqual(res.events, [next(210, 9), error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])

        let other = makeScheduler()
        let ys = makeSource(other)
        let res2 = other.start(disposed: 250) { ys.take(3) }
        XCTAssertEqual(res2.events, [next(210, 9), next(230, 13)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 250)])
    }

    func testNegativeCountIsAnError() {
        let scheduler = makeScheduler()
        let res = scheduler.start { Observable<Int>.of(1).take(-1) }
        XCTAssertEqual(res.events, [error(200, RxError.argumentOutOfRange)])
    }

    func testTakeForDurationCompletesWhenTheTimerFires() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(240, 2), next(260, 3), completed(300)])
        let res = scheduler.start { xs.take(for: .seconds(50), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), next(240, 2), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
    }

    func testTakeForZeroCompletesAtTheNextTick() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), completed(300)])
        let res = scheduler.start { xs.take(for: .seconds(0), scheduler: scheduler) }
        XCTAssertEqual(res.events, [completed(201)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 201)])
    }

    func testTakeForDurationPassesEarlierTerminalEvents() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        let res = scheduler.start { xs.take(for: .seconds(50), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
        XCTAssertFalse(scheduler.hasPendingWork, "the timer is cancelled")
    }

    func testStopsASynchronousSourceMidLoop() {
        var produced = 0
        let numbers = Observable<Int>.range(start: 0, count: 1_000_000_000).do(onNext: { _ in produced += 1 })
        var received: [Int] = []
        numbers.take(3).subscribe(onNext: { received.append($0) })
        XCTAssertEqual(received, [0, 1, 2])
        XCTAssertEqual(produced, 3)
    }
}
