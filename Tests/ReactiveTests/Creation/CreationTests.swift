@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class CreationTests: ReactiveTestCase {
    func testSynchronousSources() {
        let scheduler = makeScheduler()
        XCTAssertEqual(scheduler.start { Observable.just(1) }.events, [next(200, 1), completed(200)])
        XCTAssertEqual(
            scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) { Observable.of(1, 2) }.events,
            [next(1200, 1), next(1200, 2), completed(1200)])
        XCTAssertEqual(
            scheduler.start(created: 2100, subscribed: 2200, disposed: 3000) { Observable<Int>.empty() }.events,
            [completed(2200)])
        XCTAssertEqual(
            scheduler.start(created: 3100, subscribed: 3200, disposed: 4000) { Observable<Int>.never() }.events, [])
        XCTAssertEqual(
            scheduler.start(created: 4100, subscribed: 4200, disposed: 5000) { Observable<Int>.error(testError) }
                .events, [error(4200, testError)])
    }

    func testCreateIgnoresEventsAfterTheTerminalEventAndDisposes() {
        var disposed = 0
        let source = Observable<Int>.create { observer in
            observer.onNext(1)
            observer.onCompleted()
            observer.onNext(2)
            return Disposables.create { disposed += 1 }
        }
        var received: [Int] = []
        source.subscribe(onNext: { received.append($0) })
        XCTAssertEqual(received, [1])
        XCTAssertEqual(disposed, 1)
    }

    func testDeferredBuildsPerSubscriptionAndReportsFactoryErrors() {
        var builds = 0
        let source = Observable<Int>.deferred {
            builds += 1
            return .just(builds)
        }
        var received: [Int] = []
        source.subscribe(onNext: { received.append($0) })
        source.subscribe(onNext: { received.append($0) })
        XCTAssertEqual(received, [1, 2])
        var failure: (any Error)?
        Observable<Int>.deferred { throw testError }.subscribe(onError: { failure = $0 })
        XCTAssertEqual(failure as? TestError, testError)
    }

    func testTimerAndInterval() {
        let scheduler = makeScheduler()
        let res = scheduler.start { Observable<Int>.timer(.seconds(50), scheduler: scheduler) }
        XCTAssertEqual(res.events, [next(250, 0), completed(250)])

        let other = makeScheduler()
        let res2 = other.start(disposed: 355) { Observable<Int>.interval(.seconds(50), scheduler: other) }
        XCTAssertEqual(res2.events, [next(250, 0), next(300, 1), next(350, 2)])
        XCTAssertFalse(other.hasPendingWork, "disposal cancels the next tick")
    }

    func testRangeStopsWhenDisposedMidLoop() {
        var seen = 0
        let lifetime = Lifetime()
        Observable<Int>.range(start: 0, count: 1_000_000).subscribe(
            AnyObserver { event in
                if case .next = event {
                    seen += 1
                    if seen == 10 { lifetime.dispose() }
                }
            }, in: lifetime)
        XCTAssertEqual(seen, 10)
    }
}
