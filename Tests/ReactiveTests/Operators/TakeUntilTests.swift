@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class TakeUntilTests: ReactiveTestCase {
    func testCompletesAtTheFirstElementOfOther() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(150, 1), next(210, 2), next(220, 3), next(230, 4), next(240, 5), completed(250),
        ])
        let trigger = scheduler.createHotObservable([next(150, 1), next(225, 99), completed(230)])
        let res = scheduler.start { xs.take(until: trigger) }
        XCTAssertEqual(res.events, [next(210, 2), next(220, 3), completed(225)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 225)])
        XCTAssertEqual(trigger.subscriptions, [Subscription(200, 225)])
    }

    func testOtherCompletingWithoutElementsReleasesOnlyOther() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), next(240, 5), completed(250)])
        let trigger = scheduler.createHotObservable([completed(225, Int.self)])
        let res = scheduler.start { xs.take(until: trigger) }
        XCTAssertEqual(res.events, [next(210, 2), next(240, 5), completed(250)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 250)])
        XCTAssertEqual(trigger.subscriptions, [Subscription(200, 225)])
    }

    func testOtherErrorIsForwarded() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), next(240, 5), completed(250)])
        let trigger = scheduler.createHotObservable([error(225, testError, Int.self)])
        let res = scheduler.start { xs.take(until: trigger) }
        XCTAssertEqual(res.events, [next(210, 2), error(225, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 225)])
        XCTAssertEqual(trigger.subscriptions, [Subscription(200, 225)])
    }

    func testSourceEventsAfterTheTriggerAreNotSeen() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(205, 1), error(215, testError)])
        let trigger = scheduler.createHotObservable([next(210, 99)])
        let res = scheduler.start { xs.take(until: trigger) }
        XCTAssertEqual(res.events, [next(205, 1), completed(210)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 210)])
        XCTAssertEqual(trigger.subscriptions, [Subscription(200, 210)])
    }

    func testSourceTerminationReleasesOther() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), completed(250)])
        let trigger = scheduler.createHotObservable([next(300, 99)])
        let res = scheduler.start { xs.take(until: trigger) }
        XCTAssertEqual(res.events, [next(210, 2), completed(250)])
        XCTAssertEqual(trigger.subscriptions, [Subscription(200, 250)])
    }

    func testOtherIsSubscribedFirst() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 2), completed(250)])
        let res = scheduler.start { xs.take(until: BehaviorSubject(value: 0)) }
        XCTAssertEqual(res.events, [completed(200)])
        XCTAssertEqual(xs.subscriptions, [], "the source is never subscribed")
    }

    func testPredicateExclusiveAndInclusive() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), next(220, 2), next(230, 3), completed(250)])
        let res = scheduler.start { xs.take(until: { $0 >= 2 }) }
        XCTAssertEqual(res.events, [next(210, 1), completed(220)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 220)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1), next(220, 2), next(230, 3), completed(250)])
        let res2 = other.start { ys.take(until: { $0 >= 2 }, behavior: .inclusive) }
        XCTAssertEqual(res2.events, [next(210, 1), next(220, 2), completed(220)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 220)])
    }
}
