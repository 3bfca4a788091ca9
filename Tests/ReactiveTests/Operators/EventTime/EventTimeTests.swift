@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// `eventTime` on the TestScheduler: each element is an integer, its own time in milliseconds;
/// the ticks are the wall clock at which elements come and go.
final class EventTimeTests: ReactiveTestCase {
    private var refusals: [EventTimeRefusal] = []

    private func eventTime(
        _ source: TestableObservable<Saved>, on domain: EventTimeDomain<Saved>, wall: TestScheduler,
        maxDelay: Int64 = 0, idle: RxTimeInterval? = nil, maxAhead: Int64? = nil, state: OperatorState<Saved>? = nil
    ) -> Observable<Saved> {
        source.eventTime(
            on: domain, wall: wall,
            rules: EventTimeRules(maxDelay: maxDelay, idle: idle, maxAhead: maxAhead, seenLanesOnly: false),
            asTheyCome: { false },
            time: { element in
                guard let time = element.stateInteger else { throw TestError(1) }
                return Int64(time)
            },
            refused: { [unowned self] _, refusal in refusals.append(refusal) }, state: state)
    }

    func testElementsWaitForTheWatermarkAndGoOnInTimeOrderWhatWaitsGoesOnAtTheEnd() {
        let scheduler = makeScheduler()
        let domain = EventTimeDomain<Saved>(base: scheduler)
        let xs = scheduler.createHotObservable([
            next(210, 1000 as Saved), next(220, 3000), next(230, 2000), next(240, 9000), completed(300),
        ])
        let res = scheduler.start { self.eventTime(xs, on: domain, wall: scheduler, maxDelay: 2000) }
        // The watermark is the latest time less 2000: 1000 at 220, 7000 at 240.
        XCTAssertEqual(
            res.events, [next(220, 1000), next(240, 2000), next(240, 3000), next(300, 9000), completed(300)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
        XCTAssertEqual(domain.clock.clock, 9000)
        XCTAssertEqual(refusals, [])
    }

    func testAnElementBehindTheWatermarkIsRefusedAsLateAndTheStreamGoesOn() {
        let scheduler = makeScheduler()
        let domain = EventTimeDomain<Saved>(base: scheduler)
        let xs = scheduler.createHotObservable([
            next(210, 5000 as Saved), next(220, 1000), next(230, 5000), next(240, 6000), completed(250),
        ])
        let res = scheduler.start { self.eventTime(xs, on: domain, wall: scheduler) }
        XCTAssertEqual(res.events, [next(210, 5000), next(230, 5000), next(240, 6000), completed(250)])
        XCTAssertEqual(refusals, [.late(at: 1000)], "an element at the watermark itself is on time")
    }

    func testAnElementFarAheadIsRefusedWhenTheNextDoesNotFollowItAndTakenWhenItDoes() {
        let scheduler = makeScheduler()
        let domain = EventTimeDomain<Saved>(base: scheduler)
        let xs = scheduler.createHotObservable([
            next(210, 1000 as Saved), next(220, 9_999_000), next(230, 2000), next(240, 50_000), next(250, 45_000),
            completed(300),
        ])
        let res = scheduler.start { self.eventTime(xs, on: domain, wall: scheduler, maxAhead: 10_000) }
        // 9,999,000 waits for 2000, which does not follow it; 50,000 waits for 45,000, which does.
        XCTAssertEqual(res.events, [next(210, 1000), next(230, 2000), next(250, 50_000), completed(300)])
        XCTAssertEqual(refusals, [.ahead(at: 9_999_000, latest: 1000), .late(at: 45_000)])
    }

    func testAQuietInputStopsHoldingTheWatermarkAfterIdle() {
        let scheduler = makeScheduler()
        let domain = EventTimeDomain<Saved>(base: scheduler)
        let xs = scheduler.createHotObservable([next(210, 1000 as Saved), completed(400)])
        let res = scheduler.start {
            self.eventTime(xs, on: domain, wall: scheduler, maxDelay: 10_000, idle: .seconds(50))
        }
        // Quiet for 50 s of wall time: its watermark goes on from -9,000 by 50,000 ms.
        XCTAssertEqual(res.events, [next(260, 1000), completed(400)])
        XCTAssertEqual(domain.clock.clock, 41_000)
    }

    func testAnErrorOfTheSourceOrOfTimeEndsItAtOnceAndDisposalLetsTheSourceGo() {
        let scheduler = makeScheduler()
        let domain = EventTimeDomain<Saved>(base: scheduler)
        let xs = scheduler.createHotObservable([
            next(210, 1000 as Saved), next(220, .list([])), next(230, 3000), completed(300),
        ])
        let res = scheduler.start { self.eventTime(xs, on: domain, wall: scheduler, maxDelay: 5000) }
        XCTAssertEqual(res.events, [error(220, TestError(1))], "what waited is not delivered")
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1000 as Saved), next(400, 2000), completed(500)])
        let disposed = other.start(disposed: 300) {
            self.eventTime(ys, on: EventTimeDomain(base: other), wall: other, maxDelay: 5000, idle: .seconds(10))
        }
        XCTAssertEqual(disposed.events, [next(220, 1000)], "idle after 10 s; its timer goes with the subscription")
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 300)])
    }

    func testAResumedSubscriptionDeliversWhatWaitedAtTheCheckpoint() {
        let scheduler = makeScheduler()
        let domain = EventTimeDomain<Saved>(base: scheduler)
        let state = OperatorState<Saved>()
        let xs = scheduler.createHotObservable([next(210, 1000 as Saved), next(220, 3000), next(230, 2000)])
        var saved: Saved?
        _ = scheduler.scheduleAt(240) { saved = state.read() }
        let res = scheduler.start(disposed: 250) {
            self.eventTime(xs, on: domain, wall: scheduler, maxDelay: 5000, state: state)
        }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(
            saved?.description,
            "{clock: -2000, latest: 3000, waiting: [{time: 1000, element: 1000}, "
                + "{time: 2000, element: 2000}, {time: 3000, element: 3000}]}")

        let again = makeScheduler()
        let resumed = EventTimeDomain<Saved>(base: again)
        resumed.clock.restore(clock: -2000)
        let ys = again.createHotObservable([next(210, 8000 as Saved), completed(220)])
        let res2 = again.start {
            self.eventTime(ys, on: resumed, wall: again, maxDelay: 5000, state: OperatorState(restoring: saved))
        }
        XCTAssertEqual(
            res2.events, [next(210, 1000), next(210, 2000), next(210, 3000), next(220, 8000), completed(220)])
    }
}
