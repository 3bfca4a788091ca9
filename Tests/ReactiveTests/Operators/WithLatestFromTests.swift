@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class WithLatestFromTests: ReactiveTestCase {
    func testCombinesEachElementWithTheLatestOfOther() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(90, 1), next(180, 2), next(250, 3), next(260, 4), next(310, 5), next(340, 6), next(410, 7),
            next(420, 8), next(470, 9), next(550, 10), completed(590),
        ])
        let ys = scheduler.createHotObservable([
            next(255, "bar"), next(330, "foo"), next(350, "qux"), completed(400),
        ])
        let res = scheduler.start { xs.withLatestFrom(ys) { "\($0)\($1)" } }
        XCTAssertEqual(
            res.events,
            [
                next(260, "4bar"), next(310, "5bar"), next(340, "6foo"), next(410, "7qux"), next(420, "8qux"),
                next(470, "9qux"), next(550, "10qux"), completed(590),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 590)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 400)], "other is released when it completes")
    }

    func testOtherErrorEndsTheResult() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(260, 4), next(310, 5), completed(590)])
        let ys = scheduler.createHotObservable([next(255, "bar"), error(300, testError)])
        let res = scheduler.start { xs.withLatestFrom(ys) }
        XCTAssertEqual(res.events, [next(260, "bar"), error(300, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 300)])
    }

    func testOtherIsSubscribedFirstSoABehaviorSubjectCombinesOnTheFirstElement() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1), completed(300)])
        let subject = BehaviorSubject(value: "now")
        let res = scheduler.start { xs.withLatestFrom(subject) { "\($0)\($1)" } }
        XCTAssertEqual(res.events, [next(210, "1now"), completed(300)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testSourceErrorAndThrowingSelector() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(260, 4), next(310, 5), completed(590)])
        let ys = scheduler.createHotObservable([next(255, "bar")])
        let res = scheduler.start {
            xs.withLatestFrom(ys) { (x: Int, _: String) -> String in
                if x == 5 { throw testError }
                return "ok"
            }
        }
        XCTAssertEqual(res.events, [next(260, "ok"), error(310, testError)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 310)])
    }

    func testDisposal() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(260, 4), next(310, 5)])
        let ys = scheduler.createHotObservable([next(255, "bar")])
        let res = scheduler.start(disposed: 300) { xs.withLatestFrom(ys) }
        XCTAssertEqual(res.events, [next(260, "bar")])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 300)])
    }
}
