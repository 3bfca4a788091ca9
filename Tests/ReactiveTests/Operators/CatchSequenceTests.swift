@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `Observable.catch(sequence:)` cases: on error the next source, in the same tick.
final class CatchSequenceTests: ReactiveTestCase {
    func testAnErrorMovesOnToTheNextSourceAndACompletionEndsIt() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createColdObservable([next(10, 1), error(20, testError)])
        let xs2 = scheduler.createColdObservable([next(10, 2), completed(20)])
        let xs3 = scheduler.createColdObservable([next(10, 3), completed(20)])
        let res = scheduler.start { Observable.catch(sequence: [xs1, xs2, xs3].map { $0.asObservable() }) }
        XCTAssertEqual(res.events, [next(210, 1), next(230, 2), completed(240)])
        XCTAssertEqual(xs1.subscriptions, [Subscription(200, 220)])
        XCTAssertEqual(xs2.subscriptions, [Subscription(220, 240)])
        XCTAssertEqual(xs3.subscriptions, [])
    }

    func testWhenEverySourceFailsTheLastErrorIsTheResults() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createColdObservable([error(10, testError1, Int.self)])
        let xs2 = scheduler.createColdObservable([next(5, 2), error(10, testError2)])
        let res = scheduler.start { Observable.catch(sequence: [xs1, xs2].map { $0.asObservable() }) }
        XCTAssertEqual(res.events, [next(215, 2), error(220, testError2)])
        XCTAssertEqual(xs1.subscriptions, [Subscription(200, 210)])
        XCTAssertEqual(xs2.subscriptions, [Subscription(210, 220)])
    }

    func testNoSourcesCompleteAtOnce() {
        let scheduler = makeScheduler()
        let res = scheduler.start { Observable<Int>.catch(sequence: []) }
        XCTAssertEqual(res.events, [completed(200)])
    }

    func testDisposalStopsTheCurrentSource() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createColdObservable([error(10, testError, Int.self)])
        let xs2 = scheduler.createColdObservable([next(100, 2)])
        let res = scheduler.start(disposed: 250) { Observable.catch(sequence: [xs1, xs2].map { $0.asObservable() }) }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(xs2.subscriptions, [Subscription(210, 250)])
    }
}
