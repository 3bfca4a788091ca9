@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class FlatMapLatestTests: ReactiveTestCase {
    private struct Fixture {
        let xs: TestableObservable<Int>
        let inners: [TestableObservable<String>]
    }

    private func makeFixture(_ scheduler: TestScheduler, outerEnd: Recorded<Event<Int>> = completed(600)) -> Fixture {
        let xs = scheduler.createHotObservable([next(300, 0), next(400, 1), next(500, 2), outerEnd])
        let ys0 = scheduler.createColdObservable([next(10, "a"), next(200, "x"), completed(300)])
        let ys1 = scheduler.createColdObservable([next(20, "b"), completed(50)])
        let ys2 = scheduler.createColdObservable([next(10, "c"), next(100, "d"), completed(150)])
        return Fixture(xs: xs, inners: [ys0, ys1, ys2])
    }

    func testSwitchesToTheLatestInnerAndCompletesWithIt() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler)
        let res = scheduler.start { f.xs.flatMapLatest { f.inners[$0] } }
        XCTAssertEqual(res.events, [next(310, "a"), next(420, "b"), next(510, "c"), next(600, "d"), completed(650)])
        XCTAssertEqual(f.xs.subscriptions, [Subscription(200, 600)])
        XCTAssertEqual(f.inners[0].subscriptions, [Subscription(300, 400)])
        XCTAssertEqual(f.inners[1].subscriptions, [Subscription(400, 450)])
        XCTAssertEqual(f.inners[2].subscriptions, [Subscription(500, 650)])
    }

    func testCompletesAtOnceWhenNoInnerIsActive() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler, outerEnd: completed(700))
        let res = scheduler.start { f.xs.flatMapLatest { f.inners[$0] } }
        XCTAssertEqual(res.events.last, completed(700))
        XCTAssertEqual(f.inners[2].subscriptions, [Subscription(500, 650)])
        XCTAssertEqual(f.xs.subscriptions, [Subscription(200, 700)])
    }

    func testThrowingSelectorReleasesTheActiveInnerAndSubscribesNoOther() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler)
        let res = scheduler.start {
            f.xs.flatMapLatest { index -> TestableObservable<String> in
                if index == 1 { throw testError }
                return f.inners[index]
            }
        }
        XCTAssertEqual(res.events, [next(310, "a"), error(400, testError)])
        XCTAssertEqual(f.inners[0].subscriptions, [Subscription(300, 400)])
        XCTAssertEqual(f.inners[1].subscriptions, [])
        XCTAssertEqual(f.xs.subscriptions, [Subscription(200, 400)])
    }

    func testInnerAndOuterErrors() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), completed(600)])
        let ys = scheduler.createColdObservable([next(10, "a"), error(20, testError, String.self)])
        let res = scheduler.start { xs.flatMapLatest { _ in ys } }
        XCTAssertEqual(res.events, [next(310, "a"), error(320, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 320)])
        XCTAssertEqual(ys.subscriptions, [Subscription(300, 320)])

        let other = makeScheduler()
        let f = makeFixture(other, outerEnd: error(450, testError2))
        let res2 = other.start { f.xs.flatMapLatest { f.inners[$0] } }
        XCTAssertEqual(res2.events, [next(310, "a"), next(420, "b"), error(450, testError2)])
        XCTAssertEqual(f.inners[1].subscriptions, [Subscription(400, 450)])
    }

    func testDisposalReleasesTheCurrentInner() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler)
        let res = scheduler.start(disposed: 550) { f.xs.flatMapLatest { f.inners[$0] } }
        XCTAssertEqual(res.events, [next(310, "a"), next(420, "b"), next(510, "c")])
        XCTAssertEqual(f.inners[2].subscriptions, [Subscription(500, 550)])
        XCTAssertEqual(f.xs.subscriptions, [Subscription(200, 550)])
    }

    func testSwitchLatestIsFlatMapLatestWithIdentity() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler)
        let res = scheduler.start { f.xs.map { f.inners[$0].asObservable() }.switchLatest() }
        XCTAssertEqual(res.events, [next(310, "a"), next(420, "b"), next(510, "c"), next(600, "d"), completed(650)])
    }
}
