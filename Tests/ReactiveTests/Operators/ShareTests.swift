@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class ShareTests: ReactiveTestCase {
    func testSubscribersShareOneSubscription() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(10, 1), next(20, 2), completed(30)])
        let shared = xs.share()
        let observers = scheduler.subscribe(shared, at: 200, 215)
        scheduler.start()
        XCTAssertEqual(observers[0].events, [next(210, 1), next(220, 2), completed(230)])
        XCTAssertEqual(observers[1].events, [next(220, 2), completed(230)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 230)])
    }

    func testReplayGivesLateSubscribersTheLastElements() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), next(240, 3), completed(300)])
        let shared = xs.share(replay: 1)
        let observers = scheduler.subscribe(shared, at: 200, 230)
        scheduler.start()
        XCTAssertEqual(observers[1].events, [next(230, 2), next(240, 3), completed(300)])
        XCTAssertEqual(observers[0].events.count, 4)
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testTheSourceIsReleasedWhenTheLastSubscriberLeavesAndReconnectedAfter() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(260, 2), next(320, 3)])
        let shared = xs.share()
        let first = scheduler.createObserver(Int.self)
        let second = scheduler.createObserver(Int.self)
        let third = scheduler.createObserver(Int.self)
        var a: (any Disposable)?
        var b: (any Disposable)?
        var c: (any Disposable)?
        scheduler.scheduleAt(200) { a = shared.subscribe(first) }
        scheduler.scheduleAt(205) { b = shared.subscribe(second) }
        scheduler.scheduleAt(230) { a?.dispose() }
        scheduler.scheduleAt(250) { b?.dispose() }
        scheduler.scheduleAt(300) { c = shared.subscribe(third) }
        scheduler.scheduleAt(400) { c?.dispose() }
        scheduler.start()
        XCTAssertEqual(first.events, [next(210, 1)])
        XCTAssertEqual(second.events, [next(210, 1)])
        XCTAssertEqual(third.events, [next(320, 3)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250), Subscription(300, 400)])
    }

    func testASubscriberAfterTerminationStartsANewConnection() {
        let scheduler = makeScheduler()
        let xs = scheduler.createColdObservable([next(10, 1), completed(20)])
        let shared = xs.share(replay: 1)
        let observers = scheduler.subscribe(shared, at: 200, 300)
        scheduler.start()
        XCTAssertEqual(observers[0].events, [next(210, 1), completed(220)])
        XCTAssertEqual(observers[1].events, [next(310, 1), completed(320)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220), Subscription(300, 320)])
    }

    func testErrorReachesEverySubscriber() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        let shared = xs.share()
        let observers = scheduler.subscribe(shared, at: 200, 200)
        scheduler.start()
        XCTAssertEqual(observers[0].events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(observers[1].events, [next(210, 1), error(220, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])
    }
}
