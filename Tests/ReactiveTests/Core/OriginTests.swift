@_spi(Components) import ReactiveTesting
import XCTest

@_spi(Components) @testable import Reactive

/// An origin that writes down when it is let go (and whether something failed it) on the test
/// scheduler's clock.
private final class RecordingOrigin: Origin {
    let name: String
    let ledger: OriginLedger
    var failed = false

    init(_ name: String, _ ledger: OriginLedger) {
        self.name = name
        self.ledger = ledger
    }

    override func fail(_ error: any Error) { failed = true }

    deinit { ledger.released.append("\(name)@\(ledger.clock())\(failed ? " failed" : "")") }
}

/// What the origins did: when each was let go, and which were current at each emission.
private final class OriginLedger {
    var released: [String] = []
    var seen: [String] = []
    let clock: () -> Int

    init(_ scheduler: TestScheduler) {
        clock = { [unowned scheduler] in scheduler.clock }
    }

    /// The current origin's names (a joined one's parts), sorted.
    func current() -> String {
        guard let origin = Origin.current else { return "-" }
        let parts = (origin as? JoinedOrigin)?.parts ?? [origin]
        return parts.compactMap { ($0 as? RecordingOrigin)?.name }.sorted().joined(separator: "+")
    }
}

/// `source` with each element emitted on behalf of a fresh origin named after it (what a durable
/// source does); nothing else keeps the origins.
private func withOrigins<Element>(
    _ source: TestableObservable<Element>, _ ledger: OriginLedger
) -> Observable<Element> {
    Observable { observer, lifetime in
        source.asObservable().subscribe(
            AnyObserver { event in
                guard case .next(let element) = event else { return observer.on(event) }
                Origin.with(RecordingOrigin("\(element)", ledger)) { observer.on(event) }
            }, in: lifetime)
    }
}

/// Records, at each element, the time and the current origins.
private func noting<Element>(_ source: Observable<Element>, _ ledger: OriginLedger) -> Observable<Element> {
    source.do(onNext: { element in ledger.seen.append("\(element)@\(ledger.clock()) by \(ledger.current())") })
}

final class OriginTests: ReactiveTestCase {
    func testAnElementPassedOnAtOnceIsLetGoWhenItsEmissionReturnsAndAFilteredOneAtOnce() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(300)])
        _ = scheduler.start { noting(withOrigins(xs, ledger).filter { $0 != 2 }.map { $0 * 10 }, ledger) }
        XCTAssertEqual(ledger.seen, ["10@210 by 1"])
        XCTAssertEqual(ledger.released, ["1@210", "2@220"])
        XCTAssertNil(Origin.current, "restored after each emission")
    }

    func testDebounceLetsASupersededElementGoAtOnceAndEmitsOnBehalfOfTheLastOne() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), next(300, 3), completed(310)])
        _ = scheduler.start { noting(withOrigins(xs, ledger).debounce(.seconds(20), scheduler: scheduler), ledger) }
        XCTAssertEqual(ledger.seen, ["2@240 by 2", "3@310 by 3"], "the timer's and the completion's emission")
        XCTAssertEqual(ledger.released, ["1@220", "2@240", "3@310"])
    }

    func testThrottleEmitsTheTrailingElementOnBehalfOfItsOwnOrigin() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(215, 2), next(220, 3), completed(300)])
        _ = scheduler.start { noting(withOrigins(xs, ledger).throttle(.seconds(20), scheduler: scheduler), ledger) }
        XCTAssertEqual(ledger.seen, ["1@210 by 1", "3@230 by 3"])
        XCTAssertTrue(ledger.released.contains("3@230"), "\(ledger.released)")
    }

    func testDelayEmitsEachElementOnBehalfOfItsOwnOrigin() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(215, 2), completed(300)])
        _ = scheduler.start { noting(withOrigins(xs, ledger).delay(.seconds(50), scheduler: scheduler), ledger) }
        XCTAssertEqual(ledger.seen, ["1@260 by 1", "2@265 by 2"])
        XCTAssertEqual(ledger.released, ["1@260", "2@265"])
    }

    func testBufferZipAndReduceEmitOnBehalfOfEveryElementTheyCombine() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), next(230, 3), completed(240)])
        _ = scheduler.start {
            noting(withOrigins(xs, ledger).buffer(timeSpan: .seconds(500), count: 2, scheduler: scheduler), ledger)
        }
        XCTAssertEqual(ledger.seen, ["[1, 2]@220 by 1+2", "[3]@240 by 3"])
        XCTAssertEqual(ledger.released, ["1@220", "2@220", "3@240"])

        let other = makeScheduler()
        let second = OriginLedger(other)
        let ys = other.createHotObservable([next(210, 1), next(230, 3), completed(240)])
        let zs = other.createHotObservable([next(220, 2), completed(250)])
        _ = other.start {
            noting(Observable.zip(withOrigins(ys, second), withOrigins(zs, second)) { $0 + $1 }, second)
        }
        XCTAssertEqual(second.seen, ["3@220 by 1+2"])
        XCTAssertEqual(Array(second.released.prefix(2)), ["1@220", "2@220"])

        let third = makeScheduler()
        let totals = OriginLedger(third)
        let ws = third.createHotObservable([next(210, 1), next(220, 2), completed(230)])
        _ = third.start { noting(withOrigins(ws, totals).reduce(0, accumulator: +), totals) }
        XCTAssertEqual(totals.seen, ["3@230 by 1+2"])
        XCTAssertEqual(totals.released, ["1@230", "2@230"])
    }

    func testAFlatMapInnerKeepsItsOuterElementOpenUntilItEndsAndDeliversOnItsBehalf() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), completed(400)])
        // The inner's events come from outside the outer element's emission (as a response would).
        let answers = scheduler.createHotObservable([next(250, 7), completed(300)])
        _ = scheduler.start { noting(withOrigins(xs, ledger).flatMap { _ in answers.asObservable() }, ledger) }
        XCTAssertEqual(ledger.seen, ["7@250 by 1"])
        XCTAssertEqual(ledger.released, ["1@300"], "open until the inner completed")
    }

    func testConcatMapKeepsAWaitingElementOpenAndLetsEachGoWhenItsInnerEnds() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(215, 2), next(220, 3), completed(400)])
        _ = scheduler.start {
            noting(
                withOrigins(xs, ledger).concatMap { value in
                    scheduler.createColdObservable([next(10, value), completed(20)]).asObservable()
                }, ledger)
        }
        XCTAssertEqual(ledger.seen, ["1@220 by 1", "2@240 by 2", "3@260 by 3"])
        XCTAssertEqual(ledger.released, ["1@230", "2@250", "3@270"], "each when its own inner ended")
    }

    func testFlatMapLatestLetsTheReplacedElementGoWhenItSwitches() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(260, 2), completed(400)])
        let never = scheduler.createHotObservable([completed(500, Int.self)])
        _ = scheduler.start(disposed: 300) { withOrigins(xs, ledger).flatMapLatest { _ in never.asObservable() } }
        XCTAssertEqual(ledger.released, ["1@260", "2@300"], "the switch, then the disposal")
    }

    func testAFailureOfAJoinedOriginFailsEachPart() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), completed(240)])
        _ = scheduler.start {
            withOrigins(xs, ledger).buffer(timeSpan: .seconds(500), count: 2, scheduler: scheduler)
                .do(onNext: { _ in Origin.current?.fail(testError) })
        }
        XCTAssertEqual(ledger.released, ["1@220 failed", "2@220 failed"])
    }

    func testWithoutAnOriginNothingIsSet() {
        let scheduler = makeScheduler()
        let ledger = OriginLedger(scheduler)
        let xs = scheduler.createHotObservable([next(210, 1), completed(300)])
        _ = scheduler.start {
            noting(xs.debounce(.seconds(10), scheduler: scheduler).delay(.seconds(5), scheduler: scheduler), ledger)
        }
        XCTAssertEqual(ledger.seen, ["1@225 by -"])
    }
}
