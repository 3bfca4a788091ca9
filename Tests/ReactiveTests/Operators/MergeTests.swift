@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class MergeTests: ReactiveTestCase {
    func testSubscribesAllSourcesAndCompletesWhenAllHave() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createColdObservable([next(10, 1), completed(50)])
        let xs2 = scheduler.createColdObservable([next(20, 2), next(30, 3), completed(100)])
        let res = scheduler.start { Observable.merge(xs1.asObservable(), xs2.asObservable()) }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), next(230, 3), completed(300)])
        XCTAssertEqual(xs1.subscriptions, [Subscription(200, 250)])
        XCTAssertEqual(xs2.subscriptions, [Subscription(200, 300)])
    }

    func testNoSourcesCompletesAtSubscription() {
        let scheduler = makeScheduler()
        let res = scheduler.start { Observable<Int>.merge([]) }
        XCTAssertEqual(res.events, [completed(200)])
    }

    func testAnEmptySourceDoesNotCompleteTheResultEarly() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), completed(300)])
        let res = scheduler.start { xs.merge(with: .empty()) }
        XCTAssertEqual(res.events, [next(210, 1), completed(300)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testAnErrorReleasesEverySource() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createHotObservable([next(210, 1), error(250, testError)])
        let xs2 = scheduler.createHotObservable([next(220, 2), next(300, 3)])
        let res = scheduler.start { xs1.merge(with: xs2.asObservable()) }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2), error(250, testError)])
        XCTAssertEqual(xs1.subscriptions, [Subscription(200, 250)])
        XCTAssertEqual(xs2.subscriptions, [Subscription(200, 250)])
    }

    func testMergeOfObservablesWithMaxConcurrent() {
        let scheduler = makeScheduler()
        let ys1 = scheduler.createColdObservable([next(10, 1), completed(30)])
        let ys2 = scheduler.createColdObservable([next(10, 2), completed(30)])
        let xs = scheduler.createHotObservable([
            next(210, ys1.asObservable()), next(220, ys2.asObservable()), completed(225),
        ])
        let res = scheduler.start { xs.merge(maxConcurrent: 1) }
        XCTAssertEqual(res.events, [next(220, 1), next(250, 2), completed(270)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 225)], "the outer is released when it completes")
        XCTAssertEqual(ys1.subscriptions, [Subscription(210, 240)])
        XCTAssertEqual(ys2.subscriptions, [Subscription(240, 270)])
    }

    func testDisposal() {
        let scheduler = makeScheduler()
        let xs1 = scheduler.createHotObservable([next(210, 1), next(400, 5)])
        let xs2 = scheduler.createHotObservable([next(220, 2)])
        let res = scheduler.start(disposed: 300) { xs1.merge(with: xs2.asObservable()) }
        XCTAssertEqual(res.events, [next(210, 1), next(220, 2)])
        XCTAssertEqual(xs1.subscriptions, [Subscription(200, 300)])
        XCTAssertEqual(xs2.subscriptions, [Subscription(200, 300)])
    }
}
