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

    /// Each group as it opens and closes: `open 0 foo`, `close 0 foo`.
    private func openingsAndClosings(_ groups: Observable<GroupedObservable<String, String>>) -> Observable<String> {
        groups.flatMap { group in
            Observable.concat([
                Observable.just("open \(group.number) \(group.key)"),
                group.filter { _ in false }.asObservable(),
                Observable.just("close \(group.number) \(group.key)"),
            ])
        }
    }

    func testPastMaxGroupsTheLeastRecentlyUsedGroupClosesFirst() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(570))
        let res = scheduler.start {
            self.openingsAndClosings(
                xs.groupBy(keySelector: self.key, limits: GroupLimits(maxGroups: 2, scheduler: scheduler)))
        }
        XCTAssertEqual(
            res.events,
            [
                next(220, "open 0 foo"), next(270, "open 1 bar"),
                // foo was used at 310, so bar is the one to go.
                next(350, "close 1 bar"), next(350, "open 2 baz"),
                next(360, "close 0 foo"), next(360, "open 3 qux"),
                next(390, "close 2 baz"), next(390, "open 4 bar"),
                next(470, "close 3 qux"), next(470, "open 5 foo"),
                next(480, "close 4 bar"), next(480, "open 6 baz"),
                // The end reaches baz (used at 510) before foo (530).
                next(570, "close 6 baz"), next(570, "close 5 foo"), completed(570),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 570)])
    }

    func testAGroupQuietForIdleClosesAndItsKeyOpensANewGroupLater() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(570))
        let res = scheduler.start {
            self.openingsAndClosings(
                xs.groupBy(keySelector: self.key, limits: GroupLimits(idle: .seconds(100), scheduler: scheduler)))
        }
        XCTAssertEqual(
            res.events,
            [
                next(220, "open 0 foo"), next(270, "open 1 bar"), next(350, "open 2 baz"), next(360, "open 3 qux"),
                // Each closes 100 after its latest element: bar at 370 (270), foo at 410 (310).
                next(370, "close 1 bar"), next(390, "open 4 bar"), next(410, "close 0 foo"),
                next(450, "close 2 baz"), next(460, "close 3 qux"), next(470, "open 5 foo"), next(480, "open 6 baz"),
                next(520, "close 4 bar"), next(570, "close 6 baz"), next(570, "close 5 foo"), completed(570),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 570)])
    }

    func testTheErrorReachesTheGroupsLeastRecentlyUsedFirstWithLimits() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: error(570, testError))
        var ends: [String] = []
        let res = scheduler.start {
            xs.groupBy(keySelector: self.key, limits: GroupLimits(maxGroups: 10, scheduler: scheduler)).flatMap {
                group in
                group.do(onError: { _ in ends.append(group.key) }).catch { _ in Observable<String>.empty() }
            }.filter { _ in false }
        }
        XCTAssertEqual(res.events, [error(570, testError)])
        // Last used: qux 360, bar 420, baz 510, foo 530.
        XCTAssertEqual(ends, ["qux", "bar", "baz", "foo"])
    }

    func testDisposalReleasesTheSourceAndTheIdleTimers() {
        let scheduler = makeScheduler()
        let xs = source(scheduler, end: completed(570))
        let res = scheduler.start(disposed: 400) {
            self.openingsAndClosings(
                xs.groupBy(keySelector: self.key, limits: GroupLimits(idle: .seconds(30), scheduler: scheduler)))
        }
        XCTAssertEqual(
            res.events,
            [
                // An element comes before a timer of the same tick (the timer was set later).
                next(220, "open 0 foo"), next(270, "open 1 bar"), next(270, "close 0 foo"), next(300, "close 1 bar"),
                next(310, "open 2 foo"), next(340, "close 2 foo"), next(350, "open 3 baz"), next(360, "open 4 qux"),
                next(380, "close 3 baz"), next(390, "open 5 bar"), next(390, "close 4 qux"),
            ])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }

    func testAGroupIsEmittedOnBehalfOfNoMessageAndEachElementCarriesItsOwn() {
        let subject = PublishSubject<String>()
        let first = Origin()
        let second = Origin()
        var seen: [String] = []
        func name(_ origin: Origin?) -> String { origin === first ? "first" : origin === second ? "second" : "none" }
        let subscription = subject.groupBy(keySelector: { $0 }).flatMap { group in
            seen.append("group \(group.key): \(name(Origin.current))")
            return group.map { element in "\(element): \(name(Origin.current))" }
        }.subscribe(onNext: { seen.append($0) })
        Origin.with(first) { subject.on(.next("a")) }
        Origin.with(second) { subject.on(.next("a")) }
        subscription.dispose()
        XCTAssertEqual(seen, ["group a: none", "a: first", "a: second"])
    }
}
