@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class CombineLatestTests: ReactiveTestCase {
    func testCombinesOnceEverySourceHasEmitted() {
        let scheduler = makeScheduler()
        let e0 = scheduler.createHotObservable([next(210, 1), next(230, 3), completed(400)])
        let e1 = scheduler.createHotObservable([next(220, 2), next(240, 4), completed(500)])
        let res = scheduler.start { Observable.combineLatest([e0, e1]) { $0.reduce(0, +) } }
        XCTAssertEqual(res.events, [next(220, 3), next(230, 5), next(240, 7), completed(500)])
        XCTAssertEqual(e0.subscriptions, [Subscription(200, 400)])
        XCTAssertEqual(e1.subscriptions, [Subscription(200, 500)])
    }

    func testASourceCompletingEmptyDoesNotCompleteTheResult() {
        let scheduler = makeScheduler()
        let e0 = scheduler.createHotObservable([next(150, 1)])
        let e1 = scheduler.createHotObservable([next(150, 1), completed(210)])
        let res = scheduler.start { Observable.combineLatest([e0, e1]) { $0.reduce(0, +) } }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(e0.subscriptions, [Subscription(200, 1000)])
        XCTAssertEqual(e1.subscriptions, [Subscription(200, 210)])
    }

    func testCompletesAtAnElementThatCanNeverBeCombined() {
        let scheduler = makeScheduler()
        let e0 = scheduler.createHotObservable([completed(210, Int.self)])
        let e1 = scheduler.createHotObservable([next(215, 2), next(230, 3), completed(500)])
        let res = scheduler.start { Observable.combineLatest([e0, e1]) { $0.reduce(0, +) } }
        XCTAssertEqual(res.events, [completed(215)])
        XCTAssertEqual(e0.subscriptions, [Subscription(200, 210)])
        XCTAssertEqual(e1.subscriptions, [Subscription(200, 215)])
    }

    func testEmptyListEmitsTheSelectorOfNothing() {
        let scheduler = makeScheduler()
        let res = scheduler.start { Observable.combineLatest([TestableObservable<Int>]()) { $0.reduce(0, +) } }
        XCTAssertEqual(res.events, [next(200, 0), completed(200)])
    }

    func testErrorReleasesEverySource() {
        let scheduler = makeScheduler()
        let e0 = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        let e1 = scheduler.createHotObservable([next(215, 2), next(300, 3)])
        let res = scheduler.start { Observable.combineLatest([e0, e1]) { $0.reduce(0, +) } }
        XCTAssertEqual(res.events, [next(215, 3), error(220, testError)])
        XCTAssertEqual(e0.subscriptions, [Subscription(200, 220)])
        XCTAssertEqual(e1.subscriptions, [Subscription(200, 220)])
    }

    func testThrowingSelector() {
        let scheduler = makeScheduler()
        let e0 = scheduler.createHotObservable([next(210, 1), completed(400)])
        let e1 = scheduler.createHotObservable([next(220, 2), completed(400)])
        let res = scheduler.start {
            Observable.combineLatest([e0, e1]) { (_: [Int]) -> Int in throw testError }
        }
        XCTAssertEqual(res.events, [error(220, testError)])
        XCTAssertEqual(e0.subscriptions, [Subscription(200, 220)])
        XCTAssertEqual(e1.subscriptions, [Subscription(200, 220)])
    }

    func testTwoSourcesOfDifferentTypes() {
        let scheduler = makeScheduler()
        let numbers = scheduler.createHotObservable([next(210, 1), next(230, 2), completed(300)])
        let letters = scheduler.createHotObservable([next(220, "a"), next(240, "b"), completed(250)])
        let res = scheduler.start { Observable.combineLatest(numbers, letters) { "\($0)\($1)" } }
        XCTAssertEqual(res.events, [next(220, "1a"), next(230, "2a"), next(240, "2b"), completed(300)])
        XCTAssertEqual(numbers.subscriptions, [Subscription(200, 300)])
        XCTAssertEqual(letters.subscriptions, [Subscription(200, 250)])
    }

    func testDisposal() {
        let scheduler = makeScheduler()
        let e0 = scheduler.createHotObservable([next(210, 1), next(300, 3)])
        let e1 = scheduler.createHotObservable([next(220, 2)])
        let res = scheduler.start(disposed: 250) { Observable.combineLatest([e0, e1]) { $0.reduce(0, +) } }
        XCTAssertEqual(res.events, [next(220, 3)])
        XCTAssertEqual(e0.subscriptions, [Subscription(200, 250)])
        XCTAssertEqual(e1.subscriptions, [Subscription(200, 250)])
    }
}
