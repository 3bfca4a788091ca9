@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class RetryTests: ReactiveTestCase {
    func testRetryForeverResubscribesInTheSameTick() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(100, 1), next(150, 2), next(200, 3), error(250, testError)])
        let res = scheduler.start(disposed: 1100) { xs.retry() }
        XCTAssertEqual(
            res.events,
            [
                next(300, 1), next(350, 2), next(400, 3), next(550, 1), next(600, 2), next(650, 3), next(800, 1),
                next(850, 2), next(900, 3), next(1050, 1),
            ])
        XCTAssertEqual(
            xs.subscriptions,
            [Subscription(200, 450), Subscription(450, 700), Subscription(700, 950), Subscription(950, 1100)])
    }

    func testRetryCountsSubscriptionsNotRetries() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(5, 1), next(10, 2), next(15, 3), error(20, testError)])
        let res = scheduler.start { xs.retry(3) }
        XCTAssertEqual(
            res.events,
            [
                next(205, 1), next(210, 2), next(215, 3), next(225, 1), next(230, 2), next(235, 3), next(245, 1),
                next(250, 2), next(255, 3), error(260, testError),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220), Subscription(220, 240), Subscription(240, 260)])
    }

    func testCompletionPassesAtOnce() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(100, 1), completed(250)])
        let res = scheduler.start { xs.retry(3) }
        XCTAssertEqual(res.events, [next(300, 1), completed(450)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 450)])
    }

    func testSynchronousFailuresDoNotGrowTheStack() {
        var attempts = 0
        let failing = Observable<Int>.deferred {
            attempts += 1
            return .error(testError)
        }
        var received: (any Error)?
        failing.retry(100_000).subscribe(onError: { received = $0 })
        XCTAssertEqual(attempts, 100_000)
        XCTAssertEqual(received as? TestError, testError)
    }

    func testDelayedRetryWaitsBeforeEachAttempt() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(10, 1), error(20, testError)])
        var attemptsSeen: [Int] = []
        let res = scheduler.start {
            xs.retry(
                3,
                delay: { attempt, _ in
                    attemptsSeen.append(attempt)
                    return .seconds(attempt * 10)
                }, scheduler: scheduler)
        }
        XCTAssertEqual(res.events, [next(210, 1), next(240, 1), next(280, 1), error(290, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220), Subscription(230, 250), Subscription(270, 290)])
        XCTAssertEqual(attemptsSeen, [1, 2])
    }

    func testANilDelayStopsRetrying() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([error(20, testError, Int.self)])
        let res = scheduler.start { xs.retry(5, delay: { _, _ in nil }, scheduler: scheduler) }
        XCTAssertEqual(res.events, [error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
    }

    func testExponentialBackoffGrowsCapsAndJitters() {
        let backoff = ExponentialBackoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(5))
        XCTAssertEqual((1...5).map { backoff.delay(afterFailure: $0) }, [1, 2, 4, 5, 5].map { .seconds($0) })
        let jittered = ExponentialBackoff(
            initial: .seconds(4), maximum: .seconds(60), jitter: 0.5, random: { 0.5 })
        XCTAssertEqual(jittered.delay(afterFailure: 1), .seconds(3))

        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([error(10, testError, Int.self)])
        let res = scheduler.start {
            xs.retry(3, backoff: ExponentialBackoff(initial: .seconds(5), maximum: .seconds(60)), scheduler: scheduler)
        }
        // Attempts at 200, 215 (after 5 s) and 235 (after 10 s); each fails 10 ticks in.
        XCTAssertEqual(res.events, [error(245, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 210), Subscription(215, 225), Subscription(235, 245)])
    }

    func testDisposalEndsTheCurrentAttempt() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(100, 1), error(150, testError)])
        let res = scheduler.start(disposed: 400) { xs.retry() }
        XCTAssertEqual(res.events, [next(300, 1)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 350), Subscription(350, 400)])
    }
}
