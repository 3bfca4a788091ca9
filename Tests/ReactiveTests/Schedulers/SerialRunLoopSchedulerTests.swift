import Foundation
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

final class SerialRunLoopSchedulerTests: LeakCheckingTestCase {
    /// Runs the scheduler on a thread of its own until `body` stops it, or 10 s pass.
    private func runLoop(_ scheduler: SerialRunLoopScheduler, _ body: @escaping @Sendable () -> Void) {
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            scheduler.run()
            finished.signal()
        }
        thread.start()
        body()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "the run loop did not stop")
    }

    func testTimersRunInDueOrderOnTheLoopThread() {
        let scheduler = SerialRunLoopScheduler()
        let log = LockedBox<[String]>([])
        runLoop(scheduler) {
            scheduler.enqueue {
                let loopThread = Thread.current
                scheduler.schedule(after: .milliseconds(30)) {
                    log.mutate { $0.append("30 same=\(Thread.current == loopThread)") }
                    scheduler.stop()
                }
                scheduler.schedule(after: .milliseconds(10)) { log.mutate { $0.append("10") } }
                scheduler.schedule { log.mutate { $0.append("now") } }
                let cancelled = scheduler.schedule(after: .milliseconds(20)) { log.mutate { $0.append("20") } }
                cancelled.dispose()
            }
        }
        XCTAssertEqual(log.value, ["now", "10", "30 same=true"])
    }

    func testDebounceOnRealTime() {
        let scheduler = SerialRunLoopScheduler()
        let received = LockedBox<[String]>([])
        let elapsed = LockedBox<Duration>(.zero)
        runLoop(scheduler) {
            scheduler.enqueue {
                let subject = PublishSubject<String>()
                let start = scheduler.now
                subject.debounce(.milliseconds(50), scheduler: scheduler)
                    .subscribe(onNext: { value in
                        received.mutate { $0.append(value) }
                        elapsed.mutate { $0 = scheduler.now - start }
                        scheduler.stop()
                    })
                subject.onNext("c")
                subject.onNext("cl")
                subject.onNext("climate")
            }
        }
        XCTAssertEqual(received.value, ["climate"])
        XCTAssertGreaterThanOrEqual(elapsed.value, .milliseconds(50))
    }

    func testWorkFromManyThreadsIsSerialised() {
        let scheduler = SerialRunLoopScheduler()
        let total = UnsafeCounter()
        runLoop(scheduler) {
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                for _ in 0..<1000 { scheduler.enqueue { total.increment() } }
            }
            scheduler.enqueue { scheduler.stop() }
        }
        XCTAssertEqual(total.unsafeValue, 8000)
    }

    /// Closed after its run, what waits and what comes later is let go of, never run: a reader
    /// still delivering would otherwise keep the run's objects for as long as the scheduler lives.
    func testAClosedSchedulerLetsGoOfWhatWaitsAndWhatComesLater() {
        final class Held: @unchecked Sendable {}
        let scheduler = SerialRunLoopScheduler()
        weak var waiting: Held?
        weak var later: Held?
        let ran = LockedBox(0)
        do {
            let held = Held()
            waiting = held
            scheduler.schedule(after: .seconds(60)) {
                _ = held
                ran.mutate { $0 += 1 }
            }
        }
        scheduler.enqueue { scheduler.stop() }
        scheduler.run()
        XCTAssertNotNil(waiting, "kept while the scheduler may run again")
        scheduler.close()
        XCTAssertNil(waiting)
        do {
            let held = Held()
            later = held
            scheduler.enqueue {
                _ = held
                ran.mutate { $0 += 1 }
            }
        }
        XCTAssertNil(later)
        XCTAssertEqual(ran.value, 0)
    }
}

/// A value guarded by a lock, for reading results from the test thread.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value { lock.withLock { stored } }

    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

/// A counter with no lock: only the run loop's thread touches it, so the thread sanitizer
/// reports a race if the scheduler ever ran two actions at once.
final class UnsafeCounter: @unchecked Sendable {
    private var count = 0
    func increment() { count += 1 }
    var unsafeValue: Int { count }
}
