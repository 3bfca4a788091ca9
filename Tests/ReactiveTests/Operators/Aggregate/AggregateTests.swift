@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

/// `aggregate` on the TestScheduler, counting with lists: each window's elements, emitted as one
/// list when it closes (a negative element is one the accumulator fails on).
final class AggregateTests: ReactiveTestCase {
    /// Each window's elements, by number; what `aggregate` emits of window n is its list.
    private final class Lists {
        var open: [Int64: [Saved]] = [:]
        var emitted: [Int64: [Saved]] = [:]
        var forgotten: [Int64] = []
        let byOwnTime: Bool

        init(byOwnTime: Bool = false) { self.byOwnTime = byOwnTime }

        var accumulator: WindowAccumulator<Saved> {
            WindowAccumulator(
                time: byOwnTime ? { Double($0.stateInteger ?? 0) } : nil,
                count: { [self] element, window, _ in
                    if let value = element.stateInteger, value < 0 { throw TestError(value) }
                    open[window, default: []].append(element)
                },
                close: { [self] window, _, _, emit in
                    guard let items = open.removeValue(forKey: window) else { return }
                    emitted[window] = items
                    emit(.list(items))
                },
                update: { [self] element, window, _, emit in
                    emitted[window, default: []].append(element)
                    emit(.list(emitted[window] ?? []))
                },
                forget: { [self] before in forgotten.append(before) },
                save: { [self] in
                    open.keys.sorted().map { ("w\($0)", Saved.list(open[$0] ?? [])) }
                },
                restore: { [self] saved in
                    guard case .record(let names, let values) = saved else { return [] }
                    var numbers: [Int64] = []
                    for (name, value) in zip(names, values) where name.hasPrefix("w") {
                        let number = Int64(name.dropFirst())!
                        open[number] = value.stateList ?? []
                        numbers.append(number)
                    }
                    return numbers
                })
        }
    }

    private func windowing(every: Int?, on scheduler: TestScheduler) -> AggregateWindowing<Saved> {
        AggregateWindowing(
            every: every.map { .seconds($0) }, lateness: nil, asTheyCome: nil, scheduler: scheduler)
    }

    func testWindowsOnTheClockCloseAtTheirEndAndEmptyOnesAreNotEmitted() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1 as Saved), next(230, 2), next(260, 3), next(320, 4), completed(400),
        ])
        let lists = Lists()
        let res = scheduler.start {
            xs.aggregate(
                self.windowing(every: 50, on: scheduler), accumulator: { lists.accumulator },
                elementFailed: { error, _ in throw error })
        }
        XCTAssertEqual(res.events, [next(250, [1, 2]), next(300, [3]), next(350, [4]), completed(400)])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 400)])
    }

    func testByTheirOwnTimeALaterElementClosesTheWindowAndAnEarlierOneCountsInIt() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1000 as Saved), next(220, 5000), next(230, 12_000), next(240, 11_000), next(250, 3000),
            completed(300),
        ])
        let lists = Lists(byOwnTime: true)
        let res = scheduler.start {
            xs.aggregate(
                self.windowing(every: 10, on: scheduler), accumulator: { lists.accumulator },
                elementFailed: { error, _ in throw error })
        }
        XCTAssertEqual(res.events, [next(230, [1000, 5000]), next(300, [12_000, 11_000, 3000]), completed(300)])
    }

    func testOneWindowWithoutEveryIsEmittedAtCompletionAndAnErrorDiscardsIt() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1 as Saved), next(220, 2), completed(300)])
        let res = scheduler.start {
            xs.aggregate(
                self.windowing(every: nil, on: scheduler), accumulator: { Lists().accumulator },
                elementFailed: { error, _ in throw error })
        }
        XCTAssertEqual(res.events, [next(300, [1, 2]), completed(300)])

        let other = makeScheduler()
        let ys = other.createHotObservable([next(210, 1 as Saved), error(220, TestError(9))])
        let failed = other.start {
            ys.aggregate(
                self.windowing(every: 50, on: other), accumulator: { Lists().accumulator },
                elementFailed: { error, _ in throw error })
        }
        XCTAssertEqual(failed.events, [error(220, TestError(9))])
        XCTAssertEqual(ys.subscriptions, [Subscription(200, 220)])
    }

    func testAnElementTheAccumulatorFailsOnIsDroppedOrEndsTheResultAsElementFailedSays() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([
            next(210, 1 as Saved), next(220, -1), next(230, 2), next(240, -2), next(250, 3), completed(300),
        ])
        var dropped: [Saved] = []
        let res = scheduler.start {
            xs.aggregate(
                self.windowing(every: nil, on: scheduler), accumulator: { Lists().accumulator },
                elementFailed: { error, element in
                    guard element == -2 else { return dropped.append(element) }
                    throw error
                })
        }
        XCTAssertEqual(res.events, [error(240, TestError(-2))])
        XCTAssertEqual(dropped, [-1])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 240)])
    }

    func testDisposalReleasesTheSourceAndTheTimer() {
        let scheduler = makeScheduler()
        let xs = scheduler.createHotObservable([next(210, 1 as Saved), next(330, 2), completed(500)])
        let res = scheduler.start(disposed: 300) {
            xs.aggregate(
                self.windowing(every: 200, on: scheduler), accumulator: { Lists().accumulator },
                elementFailed: { error, _ in throw error })
        }
        XCTAssertEqual(res.events, [])
        XCTAssertEqual(xs.subscriptions, [Subscription(200, 300)])
    }

    func testAResumedSubscriptionGoesOnWithTheTimeItsWindowHadLeft() {
        let scheduler = makeScheduler()
        let state = OperatorState<Saved>()
        let xs = scheduler.createHotObservable([next(210, 1 as Saved), next(230, 2)])
        var saved: Saved?
        _ = scheduler.scheduleAt(240) { saved = state.read() }
        _ = scheduler.start(disposed: 245) {
            xs.aggregate(
                self.windowing(every: 100, on: scheduler), accumulator: { Lists().accumulator },
                elementFailed: { error, _ in throw error }, state: state)
        }
        XCTAssertEqual(saved?.description, "{elapsed: 40000000000, w0: [1, 2]}")

        // Resumed at 200 with 40 s gone: the window closes 60 s later, with what it held.
        let again = makeScheduler()
        let ys = again.createHotObservable([next(230, 3 as Saved), completed(400)])
        let res = again.start {
            ys.aggregate(
                self.windowing(every: 100, on: again), accumulator: { Lists().accumulator },
                elementFailed: { error, _ in throw error }, state: OperatorState(restoring: saved))
        }
        XCTAssertEqual(res.events, [next(260, [1, 2, 3]), completed(400)])
    }
}
