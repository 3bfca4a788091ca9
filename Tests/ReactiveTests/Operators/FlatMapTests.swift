@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class FlatMapTests: ReactiveTestCase {
    func testCompletesWhenTheSourceAndEveryInnerHaveCompleted() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), next(400, 1), completed(900)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), next(60, "b"), completed(100)])
        let ys1 = scheduler.createColdObservable([next(20, "c"), completed(560)])
        let inners = [ys0, ys1]
        let res = scheduler.start { xs.flatMap { inners[$0] } }
        XCTAssertEqual(res.events, [next(310, "a"), next(360, "b"), next(420, "c"), completed(960)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 900)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 400)])
        XCTAssertEqual(ys1.subscriptions, [Subscription(400, 960)])
    }

    func testInnerErrorReleasesEverything() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), next(400, 1), completed(900)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), next(300, "z")])
        let ys1 = scheduler.createColdObservable([next(20, "c"), error(50, testError, String.self)])
        let inners = [ys0, ys1]
        let res = scheduler.start { xs.flatMap { inners[$0] } }
        XCTAssertEqual(res.events, [next(310, "a"), next(420, "c"), error(450, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 450)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 450)])
        XCTAssertEqual(ys1.subscriptions, [Subscription(400, 450)])
    }

    func testThrowingSelectorReleasesActiveInners() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), next(400, 1), next(550, 2), completed(900)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), next(300, "z")])
        let ys1 = scheduler.createColdObservable([next(20, "c")])
        let inners = [ys0, ys1]
        let res = scheduler.start {
            xs.flatMap { index -> TestableObservable<String> in
                if index == 2 { throw testError }
                return inners[index]
            }
        }
        XCTAssertEqual(res.events, [next(310, "a"), next(420, "c"), error(550, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 550)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 550)])
        XCTAssertEqual(ys1.subscriptions, [Subscription(400, 550)])
    }

    func testOuterErrorAndDisposalReleaseTheInners() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), error(500, testError)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), next(300, "z")])
        let res = scheduler.start { xs.flatMap { _ in ys0 } }
        XCTAssertEqual(res.events, [next(310, "a"), error(500, testError)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(300, 500)])

        let other = makeScheduler()
        let outer = other.createHotObservable([next(150, 9), next(300, 0), completed(900)])
        let inner = other.createColdObservable([next(10, "a"), next(300, "z")])
        let res2 = other.start(disposed: 450) { outer.flatMap { _ in inner } }
        XCTAssertEqual(res2.events, [next(310, "a")])
        XCTAssertEqual(outer.subscriptions, [Subscription(200, 450)])
        XCTAssertEqual(inner.subscriptions, [Subscription(300, 450)], "the element before subscription is never mapped")
    }

    func testMaxConcurrentQueuesInnersInArrivalOrder() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 0), next(220, 1), next(230, 2), completed(240)])
        let ys0 = scheduler.createColdObservable([next(10, "a"), completed(50)])
        let ys1 = scheduler.createColdObservable([next(10, "b"), completed(100)])
        let ys2 = scheduler.createColdObservable([next(10, "c"), completed(20)])
        let inners = [ys0, ys1, ys2]
        let res = scheduler.start { xs.flatMap(maxConcurrent: 2) { inners[$0] } }
        XCTAssertEqual(res.events, [next(220, "a"), next(230, "b"), next(270, "c"), completed(320)])
        XCTAssertEqual(ys0.subscriptions, [Subscription(210, 260)])
        XCTAssertEqual(ys1.subscriptions, [Subscription(220, 320)])
        XCTAssertEqual(ys2.subscriptions, [Subscription(260, 280)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 240)])
    }

    func testSameTickInnerTimersFireInTheOrderTheyWereArmed() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 0), next(220, 1), completed(300)])
        let ys0 = scheduler.createColdObservable([next(20, "from 210"), completed(30)])
        let ys1 = scheduler.createColdObservable([next(10, "from 220"), completed(20)])
        let inners = [ys0, ys1]
        let res = scheduler.start { xs.flatMap { inners[$0] } }
        XCTAssertEqual(
            res.events, [next(230, "from 210"), next(230, "from 220"), completed(300)])
    }

    func testManySynchronousInnersDoNotGrowTheStack() {
        var count = 0
        var completedFlag = false
        Observable.range(start: 0, count: 200_000)
            .flatMap(maxConcurrent: 1) { Observable.just($0) }
            .subscribe(onNext: { _ in count += 1 }, onCompleted: { completedFlag = true })
        XCTAssertEqual(count, 200_000)
        XCTAssertTrue(completedFlag)
    }
}
