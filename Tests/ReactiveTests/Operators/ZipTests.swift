@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `zip` cases: pairs by position; the two-source form completes when both have, the
/// collection form as soon as an element can never be paired.
final class ZipTests: ReactiveTestCase {
    func testAnEmptySourceAndANeverEndingOneGiveNothing() {
        let scheduler = makeScheduler()
        let n = scheduler.createHotObservable([next(150, 1)])
        let e = scheduler.createHotObservable([next(150, 1), completed(210)])
        let res = scheduler.start { Observable.zip(n, e) { $0 + $1 } }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(n.subscriptions, [Subscription(200, 1000)])
        XCTAssertEqual(e.subscriptions, [Subscription(200, 210)])
    }

    func testTheTwoSourceFormCompletesWhenBothHave() {
        let scheduler = makeScheduler()
        let e = scheduler.createHotObservable([next(150, 1), completed(210)])
        let o = scheduler.createHotObservable([next(150, 1), next(215, 2), completed(220)])
        let res = scheduler.start { Observable.zip(e, o) { $0 + $1 } }
        XCTAssertEqual(res.events, [completed(220)])
        XCTAssertEqual(e.subscriptions, [Subscription(200, 210)])
        XCTAssertEqual(o.subscriptions, [Subscription(200, 220)])

        let o1 = scheduler.createHotObservable([next(1210, 2), completed(1220)])
        let o2 = scheduler.createHotObservable([next(1215, 4), completed(1225)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            Observable.zip(o1, o2) { $0 + $1 }
        }
        XCTAssertEqual(res2.events, [next(1215, 6), completed(1225)])
        XCTAssertEqual(o1.subscriptions, [Subscription(1200, 1220)])
        XCTAssertEqual(o2.subscriptions, [Subscription(1200, 1225)])
    }

    func testTheCollectionFormCompletesAtAnElementThatCanNeverBePaired() {
        let scheduler = makeScheduler()
        let e0 = scheduler.createHotObservable([next(150, 1), next(210, 1), next(250, 4), completed(270)])
        let e1 = scheduler.createHotObservable([
            next(150, 1), next(220, 2), next(240, 5), next(290, 7), next(310, 9), completed(410),
        ])
        let e2 = scheduler.createHotObservable([next(150, 1), next(230, 3), next(260, 6), next(280, 8), completed(300)])
        let res = scheduler.start {
            Observable.zip([e0, e1, e2].map { $0.asObservable() }).map { $0.map(String.init).joined() }
        }
        XCTAssertEqual(res.events, [next(230, "123"), next(260, "456"), completed(310)])
        XCTAssertEqual(e0.subscriptions, [Subscription(200, 270)])
        XCTAssertEqual(e1.subscriptions, [Subscription(200, 310)])
        XCTAssertEqual(e2.subscriptions, [Subscription(200, 300)])
    }

    func testThreeSourcesAndAnEmptyCollection() {
        let scheduler = makeScheduler()
        let a = scheduler.createColdObservable([next(10, 1), next(20, 2), completed(30)])
        let b = scheduler.createColdObservable([next(15, "x"), completed(40)])
        let c = scheduler.createColdObservable([next(5, true), next(25, false), completed(50)])
        let res = scheduler.start { Observable.zip(a, b, c) { "\($0)\($1)\($2)" } }
        XCTAssertEqual(res.events, [next(215, "1xtrue"), completed(250)])
        let empty = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            Observable.zip([Observable<Int>]()).map(\.count)
        }
        XCTAssertEqual(empty.events, [completed(1200)])
    }

    func testAnErrorOrAThrowingSelectorEndsItAtOnce() {
        let scheduler = makeScheduler()
        let o1 = scheduler.createHotObservable([next(210, 1), error(220, testError)])
        let o2 = scheduler.createHotObservable([next(215, 2), completed(300)])
        let res = scheduler.start { Observable.zip(o1, o2) { $0 + $1 } }
        XCTAssertEqual(res.events, [next(215, 3), error(220, testError)])
        XCTAssertEqual(o2.subscriptions, [Subscription(200, 220)])

        let p1 = scheduler.createHotObservable([next(1210, 1), next(1230, 2)])
        let p2 = scheduler.createHotObservable([next(1220, 1), next(1240, 2)])
        let res2 = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            Observable.zip(p1, p2) { x, y -> Int in
                if x == 2 { throw testError2 }
                return x + y
            }
        }
        XCTAssertEqual(res2.events, [next(1220, 2), error(1240, testError2)])
        XCTAssertEqual(p1.subscriptions, [Subscription(1200, 1240)])
    }
}
