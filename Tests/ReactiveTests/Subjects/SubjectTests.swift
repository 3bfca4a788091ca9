@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import XCTest

final class PublishSubjectTests: ReactiveTestCase {
    func testSubscribersSeeOnlyWhatComesAfterThem() {
        let scheduler = makeScheduler()
        let subject = PublishSubject<Int>()
        let early = scheduler.createObserver(Int.self)
        let late = scheduler.createObserver(Int.self)
        var lateSubscription: (any Disposable)?
        scheduler.scheduleAt(100) { subject.subscribe(early) }
        scheduler.scheduleAt(210) { subject.onNext(1) }
        scheduler.scheduleAt(220) { lateSubscription = subject.subscribe(late) }
        scheduler.scheduleAt(230) { subject.onNext(2) }
        scheduler.scheduleAt(240) { lateSubscription?.dispose() }
        scheduler.scheduleAt(250) { subject.onNext(3) }
        scheduler.scheduleAt(260) { subject.onCompleted() }
        scheduler.scheduleAt(270) { subject.onNext(4) }
        scheduler.start()
        XCTAssertEqual(early.events, [next(210, 1), next(230, 2), next(250, 3), completed(260)])
        XCTAssertEqual(late.events, [next(230, 2)])
        XCTAssertFalse(subject.hasObservers)
    }

    func testLateSubscribersGetTheTerminalEvent() {
        let subject = PublishSubject<Int>()
        subject.onError(testError)
        var received: (any Error)?
        subject.subscribe(onError: { received = $0 })
        XCTAssertEqual(received as? TestError, testError)
    }

    /// A subscription whose lifetime ended before it reached the subject (an operator disposed
    /// while it subscribed) is not one: it gets nothing, not even an ended subject's terminal event.
    func testASubscriberWhoseLifetimeIsAlreadyOverGetsNothingFromAnEndedSubject() {
        let ended = Lifetime()
        ended.dispose()
        let publish = PublishSubject<Int>()
        publish.onCompleted()
        let behavior = BehaviorSubject(value: 1)
        behavior.onError(testError)
        let replay = ReplaySubject<Int>.create(bufferSize: 1)
        replay.onCompleted()
        var received: [String] = []
        for subject in [publish.asObservable(), behavior.asObservable(), replay.asObservable()] {
            subject.subscribe(AnyObserver { received.append("\($0)") }, in: ended)
        }
        XCTAssertEqual(received, [])
        XCTAssertFalse(publish.hasObservers)
        // The same subscription with a live lifetime gets the terminal event.
        publish.asObservable().subscribe(AnyObserver { received.append("\($0)") }, in: Lifetime())
        XCTAssertEqual(received, ["completed"])
    }

    func testDisposedSubjectFailsNewSubscribers() {
        let subject = PublishSubject<Int>()
        subject.dispose()
        var received: (any Error)?
        subject.subscribe(onError: { received = $0 })
        XCTAssertEqual(received as? RxError, .disposed)
    }
}

final class BehaviorSubjectTests: ReactiveTestCase {
    func testNewSubscribersGetTheCurrentValueFirst() throws {
        let scheduler = makeScheduler()
        let subject = BehaviorSubject(value: 0)
        let first = scheduler.createObserver(Int.self)
        let second = scheduler.createObserver(Int.self)
        scheduler.scheduleAt(200) { subject.subscribe(first) }
        scheduler.scheduleAt(210) { subject.onNext(1) }
        scheduler.scheduleAt(220) { subject.subscribe(second) }
        scheduler.scheduleAt(230) { subject.onCompleted() }
        scheduler.start()
        XCTAssertEqual(first.events, [next(200, 0), next(210, 1), completed(230)])
        XCTAssertEqual(second.events, [next(220, 1), completed(230)])
        XCTAssertEqual(try subject.value(), 1)
    }

    func testValueThrowsAfterAnErrorOrDisposal() {
        let subject = BehaviorSubject(value: 0)
        subject.onError(testError)
        XCTAssertThrowsError(try subject.value()) { XCTAssertEqual($0 as? TestError, testError) }
        let other = BehaviorSubject(value: 0)
        other.dispose()
        XCTAssertThrowsError(try other.value()) { XCTAssertEqual($0 as? RxError, .disposed) }
    }
}

final class ReplaySubjectTests: ReactiveTestCase {
    func testReplaysTheLastElementsThenTheTerminalEvent() {
        let subject = ReplaySubject<Int>.create(bufferSize: 2)
        for value in 1...5 { subject.onNext(value) }
        var received: [Int] = []
        subject.subscribe(onNext: { received.append($0) })
        XCTAssertEqual(received, [4, 5])
        subject.onNext(6)
        subject.onCompleted()
        var late: [Int] = []
        var completedFlag = false
        subject.subscribe(onNext: { late.append($0) }, onCompleted: { completedFlag = true })
        XCTAssertEqual(received, [4, 5, 6])
        XCTAssertEqual(late, [5, 6])
        XCTAssertTrue(completedFlag)
    }

    func testUnboundedReplaysEverythingAndStaysBoundedWhenSized() {
        let unbounded = ReplaySubject<Int>.createUnbounded()
        for value in 1...300 { unbounded.onNext(value) }
        var all: [Int] = []
        unbounded.subscribe(onNext: { all.append($0) })
        XCTAssertEqual(all, Array(1...300))

        let sized = ReplaySubject<Int>.create(bufferSize: 3)
        for value in 1...10_000 { sized.onNext(value) }
        var last: [Int] = []
        sized.subscribe(onNext: { last.append($0) })
        XCTAssertEqual(last, [9998, 9999, 10000])
    }
}
