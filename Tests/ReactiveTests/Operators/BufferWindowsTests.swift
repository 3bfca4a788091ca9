@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// `buffer` with a `WindowShape` (the `window` component's operator): windows by time, slide,
/// session and count, each emitted as its list when it closes, and lists run through a chain.
final class BufferWindowsTests: ReactiveTestCase {
    private func shape(
        every: Int? = nil, count: Int? = nil, slide: Int? = nil, sessionGap: Int? = nil
    ) -> WindowShape {
        WindowShape(
            every: every.map { .seconds($0) }, count: count, slide: slide.map { .seconds($0) },
            sessionGap: sessionGap.map { .seconds($0) })
    }

    func testATumblingWindowTakesAnElementOnItsBoundaryIntoTheNextAndEmptyWindowsAreNotEmitted() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1 as Saved), next(230, 2), next(250, 3), next(320, 4), completed(400),
        ])
        let res = scheduler.start { xs.buffer(self.shape(every: 50), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(250, [1, 2]), next(300, [3]), next(350, [4]), completed(400)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }

    func testSlidingWindowsOverlapAndCompletionEmitsTheOpenOnesOldestFirst() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1 as Saved), next(240, 2), next(275, 3), completed(300)])
        let res = scheduler.start { xs.buffer(self.shape(every: 60, slide: 30), scheduler: scheduler) }
        // Windows from 200, 230, 260, each 60 long.
        XCTAssertEqual(res.events, [next(260, [1, 2]), next(290, [2, 3]), next(300, [3]), completed(300)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testASessionClosesAfterTheGapAndAnElementExactlyAGapLaterStartsTheNext() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1 as Saved), next(225, 2), next(250, 3), next(270, 4), completed(300),
        ])
        let res = scheduler.start { xs.buffer(self.shape(sessionGap: 20), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(245, [1, 2]), next(270, [3]), next(290, [4]), completed(300)])
    }

    func testCountClosesAWindowEarlyAndTheRestOfItsPeriodIsANewWindow() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1 as Saved), next(220, 2), next(230, 3), next(310, 4), completed(350),
        ])
        let byCount = scheduler.start { xs.buffer(self.shape(count: 2), scheduler: scheduler) }
        XCTAssertEqual(byCount.events, [next(220, [1, 2]), next(310, [3, 4]), completed(350)])

        let other = makeScheduler()
        let ys = other.createHotObservable([
            next(210, 1 as Saved), next(220, 2), next(230, 3), next(310, 4), completed(350),
        ])
        let both = other.start { ys.buffer(self.shape(every: 100, count: 2), scheduler: other) }
        XCTAssertEqual(both.events, [next(220, [1, 2]), next(300, [3]), next(350, [4]), completed(350)])
    }

    func testAnErrorDiscardsTheOpenWindowsAndDisposalReleasesTheSourceAndTimer() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1 as Saved), error(230, testError)])
        let res = scheduler.start { xs.buffer(self.shape(every: 50), scheduler: scheduler) }
        XCTAssertEqual(res.events, [error(230, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 230)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1 as Saved), next(260, 2), completed(400)])
        let disposed = other.start(disposed: 235) { ys.buffer(self.shape(every: 50), scheduler: other) }
        XCTAssertEqual(disposed.events, [])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 235)])
    }

    func testThroughAChainTheResultCompletesOnceTheLastChainHas() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1 as Saved), next(220, 2), completed(260)])
        let res = scheduler.start {
            xs.buffer(self.shape(every: 50), scheduler: scheduler) { $0.delay(.seconds(30), scheduler: scheduler) }
        }
        // The window closes at 250; its chain runs until 280, after the source completed at 260.
        XCTAssertEqual(res.events, [next(280, 1), next(280, 2), completed(280)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 260)])
    }

    func testAListGoesOutOnBehalfOfEveryMessageItHolds() {
        let scheduler = makeScheduler()
        let subject = PublishSubject<Saved>()
        let origins = [Origin(), Origin()]
        var emitted: [Origin?] = []
        let subscription = subject.buffer(shape(count: 2), scheduler: scheduler).subscribe(onNext: { _ in
            emitted.append(Origin.current)
        })
        for (index, origin) in origins.enumerated() { Origin.with(origin) { subject.on(.next(.integer(index))) } }
        subscription.dispose()
        XCTAssertEqual(emitted.count, 1)
        let joined = emitted.first.flatMap { $0 }
        XCTAssertNotNil(joined)
        XCTAssertFalse(joined === origins[0] || joined === origins[1], "one origin joining both messages")
    }
}
