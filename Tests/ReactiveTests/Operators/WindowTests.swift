@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `window(timeSpan:count:)` cases, and the windows' own lives.
final class WindowTests: ReactiveTestCase {
    private func source(_ scheduler: TestScheduler, end: Recorded<Event<Int>>) -> TestableObservable<Int> {
        scheduler.createHotObservable([
            next(105, 0), next(205, 1), next(210, 2), next(240, 3), next(280, 4), next(320, 5), next(350, 6),
            next(370, 7), next(420, 8), next(470, 9), end,
        ])
    }

    /// Each element labelled with the number of its window.
    private func labelled(_ windows: Observable<Observable<Int>>) -> Observable<String> {
        var index = 0
        return windows.map { window -> Observable<String> in
            let number = index
            index += 1
            return window.map { "\(number) \($0)" }
        }.merge()
    }

    private let expected = [
        next(205, "0 1"), next(210, "0 2"), next(240, "0 3"), next(280, "1 4"), next(320, "2 5"), next(350, "2 6"),
        next(370, "2 7"), next(420, "3 8"), next(470, "4 9"),
    ]

    func testAWindowClosesWhenFullOrWhenItsTimeIsUp() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(600))
        let res = scheduler.start { self.labelled(xs.window(timeSpan: .seconds(70), count: 3, scheduler: scheduler)) }
        XCTAssertEqual(res.events, expected + [completed(600)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 600)])
    }

    func testAnErrorEndsTheWindowAndTheResult() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: error(600, testError))
        let res = scheduler.start { self.labelled(xs.window(timeSpan: .seconds(70), count: 3, scheduler: scheduler)) }
        XCTAssertEqual(res.events, expected + [error(600, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 600)])
    }

    func testDisposalEndsItAll() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(600))
        let res = scheduler.start(disposed: 370) {
            self.labelled(xs.window(timeSpan: .seconds(70), count: 3, scheduler: scheduler))
        }
        XCTAssertEqual(res.events, Array(expected.prefix(7)))
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 370)])
    }

    func testTheWindowsOpenAtSubscriptionAndAtEachCloseEmptyOnesIncluded() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(230, 1), completed(400)])
        let res = scheduler.start {
            xs.window(timeSpan: .seconds(100), count: 10, scheduler: scheduler).flatMap { $0.toArray() }.map(\.count)
        }
        XCTAssertEqual(res.events, [next(300, 1), next(400, 0), completed(400)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }

    func testAWindowStillSubscribedKeepsTheSourceAfterTheResultIsDisposed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(260, 2), next(320, 3), completed(400)])
        let inner = scheduler.createObserver(Int.self)
        var outer: (any Disposable)?
        var window: (any Disposable)?
        scheduler.scheduleAt(200) {
            outer = xs.window(timeSpan: .seconds(100), count: 10, scheduler: scheduler).subscribe(onNext: { w in
                if window == nil { window = w.subscribe(inner) }
            })
        }
        scheduler.scheduleAt(250) { outer?.dispose() }
        scheduler.scheduleAt(350) { window?.dispose() }
        scheduler.start()
        XCTAssertEqual(inner.events, [next(210, 1), next(260, 2), completed(300)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 350)], "released with its last window's subscription")
    }
}
