@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// RxSwift's `groupBy` cases: groups open at their first element, the end reaches every open
/// group before the result, and the source lives while the result or a group is subscribed.
final class GroupByTests: ReactiveTestCase {
    private func source(_ scheduler: TestScheduler, end: Recorded<Event<String>>) -> TestableObservable<String> {
        scheduler.createHotObservable([
            next(90, "error"), next(110, "error"), next(130, "error"), next(220, "  foo"), next(240, " FoO "),
            next(270, "baR  "), next(310, "foO "), next(350, " Baz   "), next(360, "  qux "), next(390, "   bar"),
            next(420, " BAR  "), next(470, "FOO "), next(480, "baz  "), next(510, " bAZ "), next(530, "    fOo    "),
            end,
        ])
    }

    private func key(_ text: String) -> String { text.trimmingCharacters(in: .whitespaces).lowercased() }

    func testTheGroupsOpenInOrderAndCompleteWithTheSource() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(570))
        let res = scheduler.start { xs.groupBy(keySelector: self.key).map(\.key) }
        XCTAssertEqual(
            res.events, [next(220, "foo"), next(270, "bar"), next(350, "baz"), next(360, "qux"), completed(570)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 570)])
    }

    func testEachGroupHasItsElementsAndTheEnd() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: error(570, testError))
        let res = scheduler.start {
            xs.groupBy(keySelector: self.key).flatMap { group in group.map { "\(group.key): \($0)" } }
        }
        XCTAssertEqual(
            res.events,
            [
                next(220, "foo:   foo"), next(240, "foo:  FoO "), next(270, "bar: baR  "), next(310, "foo: foO "),
                next(350, "baz:  Baz   "), next(360, "qux:   qux "), next(390, "bar:    bar"), next(420, "bar:  BAR  "),
                next(470, "foo: FOO "), next(480, "baz: baz  "), next(510, "baz:  bAZ "), next(530, "foo:     fOo    "),
                error(570, testError),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 570)])
    }

    func testTheErrorReachesEveryOpenGroupBeforeTheResult() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: error(570, testError))
        var ends: [String] = []
        let res = scheduler.start {
            xs.groupBy(keySelector: self.key).flatMap { group in
                group.do(onError: { _ in ends.append(group.key) }).catch { _ in Observable<String>.empty() }
            }.map { _ in "" }.filter { _ in false }.do(onError: { _ in ends.append("result") })
        }
        XCTAssertEqual(res.events, [error(570, testError)])
        XCTAssertEqual(ends, ["foo", "bar", "baz", "qux", "result"])
    }

    func testAThrowingKeySelectorIsAnError() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(570))
        let res = scheduler.start {
            xs.groupBy { text -> String in
                if text.contains("qux") { throw testError }
                return self.key(text)
            }.map(\.key)
        }
        XCTAssertEqual(res.events, [next(220, "foo"), next(270, "bar"), next(350, "baz"), error(360, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 360)])
    }

    func testAGroupSubscribedLaterSeesOnlyWhatComesThenAndKeepsTheSourceAfterTheResultIsDisposed() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(570))
        var groups: [String: Observable<String>] = [:]
        let foo = scheduler.createObserver(String.self)
        var outer: (any Disposable)?
        var fooSubscription: (any Disposable)?
        scheduler.scheduleAt(200) {
            outer = xs.groupBy(keySelector: self.key).subscribe(onNext: { groups[$0.key] = $0.asObservable() })
        }
        scheduler.scheduleAt(300) { fooSubscription = groups["foo"]?.subscribe(foo) }
        scheduler.scheduleAt(400) { outer?.dispose() }
        scheduler.scheduleAt(500) { fooSubscription?.dispose() }
        scheduler.start()
        XCTAssertEqual(foo.events, [next(310, "foO "), next(470, "FOO ")])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 500)])
    }

    func testDisposalWithNoGroupSubscribedEndsTheSource() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(570))
        let res = scheduler.start(disposed: 355) { xs.groupBy(keySelector: self.key).map(\.key) }
        XCTAssertEqual(res.events, [next(220, "foo"), next(270, "bar"), next(350, "baz")])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 355)])
    }
}
