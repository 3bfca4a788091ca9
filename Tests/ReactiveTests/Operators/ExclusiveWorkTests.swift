@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// `flatMapFirst` (RxSwift's) and `exclusiveWork`, which it and the `action` and `scanPaginate`
/// components are built on: one inner at a time, the rest refused, never queued.
final class ExclusiveWorkTests: ReactiveTestCase {
    private struct Fixture {
        let xs: TestableObservable<Int>
        let inners: [TestableObservable<String>]
    }

    private func makeFixture(_ scheduler: TestScheduler, outerEnd: Recorded<Event<Int>> = completed(700)) -> Fixture {
        let xs = scheduler.createHotObservable([next(300, 0), next(350, 1), next(650, 2), outerEnd])
        let ys0 = scheduler.createColdObservable([next(10, "a"), next(200, "x"), completed(300)])
        let ys1 = scheduler.createColdObservable([next(20, "b"), completed(50)])
        let ys2 = scheduler.createColdObservable([next(10, "c"), next(100, "d"), completed(150)])
        return Fixture(xs: xs, inners: [ys0, ys1, ys2])
    }

    func testFlatMapFirstDropsElementsWhileAnInnerRunsAndCompletesAfterTheLastInner() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler)
        var selected: [Int] = []
        let res = scheduler.start {
            f.xs.flatMapFirst { index -> TestableObservable<String> in
                selected.append(index)
                return f.inners[index]
            }
        }
        XCTAssertEqual(res.events, [next(310, "a"), next(500, "x"), next(660, "c"), next(750, "d"), completed(800)])
        XCTAssertEqual(selected, [0, 2], "the selector runs only for an element that is taken")
        XCTAssertEqual(f.xs.subscriptions, [Subscription(200, 700)])
        XCTAssertEqual(f.inners[0].subscriptions, [Subscription(300, 600)])
        XCTAssertEqual(f.inners[1].subscriptions, [])
        XCTAssertEqual(f.inners[2].subscriptions, [Subscription(650, 800)])
    }

    func testFlatMapFirstCompletesAtOnceWhenNoInnerRuns() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(300, 0), completed(620)])
        let ys = scheduler.createColdObservable([next(10, "a"), completed(300)])
        let res = scheduler.start { xs.flatMapFirst { _ in ys } }
        XCTAssertEqual(res.events, [next(310, "a"), completed(620)])
        XCTAssertEqual(ys.subscriptions, [Subscription(300, 600)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 620)])
    }

    func testFlatMapFirstErrorsFromTheSelectorTheInnerAndTheSourceEndItAtOnce() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler)
        let res = scheduler.start {
            f.xs.flatMapFirst { index -> TestableObservable<String> in
                if index == 2 { throw testError }
                return f.inners[index]
            }
        }
        XCTAssertEqual(res.events, [next(310, "a"), next(500, "x"), error(650, testError)])
        XCTAssertEqual(f.inners[2].subscriptions, [])
        XCTAssertEqual(f.xs.subscriptions, [Subscription(200, 650)])

        let second = makeScheduler()
        let xs = second.createHotObservable([next(300, 0), completed(600)])
        let failing = second.createColdObservable([next(10, "a"), error(20, testError, String.self)])
        let res2 = second.start { xs.flatMapFirst { _ in failing } }
        XCTAssertEqual(res2.events, [next(310, "a"), error(320, testError)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 320)])

        let third = makeScheduler()
        let g = makeFixture(third, outerEnd: error(450, testError2))
        let res3 = third.start { g.xs.flatMapFirst { g.inners[$0] } }
        XCTAssertEqual(res3.events, [next(310, "a"), error(450, testError2)])
        XCTAssertEqual(g.inners[0].subscriptions, [Subscription(300, 450)])
    }

    func testFlatMapFirstDisposalReleasesTheRunningInner() {
        let scheduler = makeScheduler()
        let f = makeFixture(scheduler)
        let res = scheduler.start(disposed: 550) { f.xs.flatMapFirst { f.inners[$0] } }
        XCTAssertEqual(res.events, [next(310, "a"), next(500, "x")])
        XCTAssertEqual(f.inners[0].subscriptions, [Subscription(300, 550)])
        XCTAssertEqual(f.xs.subscriptions, [Subscription(200, 550)])
    }

    /// Rules that record what they were told, admit odd inputs only, recover from failures and
    /// restore the input `restored` at subscription.
    private final class RecordingRules: ExclusiveWorkRules {
        let inners: [Int: Observable<String>]
        let restored: Int?
        var told: [String] = []

        init(inners: [Int: Observable<String>], restored: Int? = nil) {
            self.inners = inners
            self.restored = restored
        }

        func subscribed(in lifetime: Lifetime) -> Int? { restored }
        func gateChanged(open: Bool) { told.append("gate \(open)") }
        func admits(_ input: Int) -> Bool { input % 2 == 1 }
        func refused(_ input: Int) { told.append("refused \(input)") }
        func work(for input: Int, running: Lifetime) throws -> Observable<String> {
            told.append("work \(input)")
            return inners[input] ?? .empty()
        }
        func failed(_ error: any Error, input: Int) -> (any Error)? {
            told.append("failed \(input)")
            return nil
        }
        func ended() { told.append("ended") }
    }

    func testAGateAndTheRulesRefuseInputsAFailureLeavesItIdleAndARestoredInputRunsFirst() {
        let scheduler = makeScheduler()
        let gate = scheduler.createHotObservable([next(250, false), next(320, true), completed(330)])
        let xs = scheduler.createHotObservable([
            next(300, 1), next(340, 2), next(350, 3), next(360, 5), next(500, 7), completed(700),
        ])
        let restored = scheduler.createColdObservable([next(10, "r"), completed(30)])
        let three = scheduler.createColdObservable([next(10, "t"), error(50, testError, String.self)])
        let seven = scheduler.createColdObservable([next(10, "s"), completed(20)])
        let rules = RecordingRules(
            inners: [9: restored.asObservable(), 3: three.asObservable(), 7: seven.asObservable()], restored: 9)
        let res = scheduler.start { xs.exclusiveWork(gate: gate.asObservable()) { rules } }
        // 1 comes while the gate is shut, 2 is not admitted, 5 comes while 3's work runs.
        XCTAssertEqual(res.events, [next(210, "r"), next(360, "t"), next(510, "s"), completed(700)])
        XCTAssertEqual(
            rules.told,
            [
                "work 9", "ended", "gate false", "refused 1", "gate true", "refused 2", "work 3", "refused 5",
                "failed 3", "ended", "work 7", "ended",
            ])
        XCTAssertEqual(restored.subscriptions, [Subscription(200, 230)])
        XCTAssertEqual(three.subscriptions, [Subscription(350, 400)])
        XCTAssertEqual(
            gate.subscriptions, [Subscription(200, 330)], "a completed gate is let go of; its last value stays")
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 700)])
    }

    func testTheGatesErrorEndsTheResultAndReleasesTheWork() {
        let scheduler = makeScheduler()
        let gate = scheduler.createHotObservable([next(250, true), error(400, testError, Bool.self)])
        let xs = scheduler.createHotObservable([next(300, 1), completed(700)])
        let work = scheduler.createColdObservable([next(10, "a"), next(200, "b"), completed(300)])
        let rules = RecordingRules(inners: [1: work.asObservable()])
        let res = scheduler.start { xs.exclusiveWork(gate: gate.asObservable()) { rules } }
        XCTAssertEqual(res.events, [next(310, "a"), error(400, testError)])
        XCTAssertEqual(work.subscriptions, [Subscription(300, 400)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }
}
