@_spi(Components) import ReactiveTesting
import RivuletTestSupport
import XCTest

@_spi(Components) @testable import Reactive

/// A domain's driven input (a partition's: its watermark is given by `drive`, not read from its
/// elements) taking elements as they come.
final class EventTimeDomainTests: LeakCheckingTestCase {
    private let domain = EventTimeDomain<String>(base: TestScheduler())
    private var log: [String] = []
    /// How long after its element's time the work an element schedules is due.
    private var workAfter: RxTimeInterval = .zero

    private func drivenInput() -> EventTimeDomain<String>.Input {
        let input = EventTimeDomain<String>.Input(maxDelay: 0) { [unowned self] element in
            log.append("took \(element)")
            domain.clock.schedule(after: workAfter) { [unowned self] in log.append("work of \(element)") }
        }
        input.isDriven = true
        input.asTheyCome = true
        domain.add(input)
        return input
    }

    /// Work an element schedules for its own time waits until the watermark passes it: another
    /// element of that millisecond may still come, and goes first, as on the run clock.
    func testWorkAnElementSchedulesForItsOwnTimeRunsOnceTheWatermarkPassesIt() {
        let input = drivenInput()
        domain.drive(input, to: 1_000)
        XCTAssertTrue(domain.take("a", at: 1_000, from: input))
        XCTAssertTrue(domain.take("b", at: 1_000, from: input))
        XCTAssertEqual(log, ["took a", "took b"])
        domain.drive(input, to: 1_001)
        XCTAssertEqual(log, ["took a", "took b", "work of a", "work of b"])
    }

    /// Work due later waits for a watermark past it, which the next drives give.
    func testWorkDueLaterWaitsForTheNextDrive() {
        let input = drivenInput()
        workAfter = .seconds(5)
        domain.drive(input, to: 1_000)
        XCTAssertTrue(domain.take("a", at: 1_000, from: input))
        XCTAssertEqual(log, ["took a"])
        domain.drive(input, to: 6_000)
        XCTAssertEqual(log, ["took a"], "due at 6,000: an element of 6,000 may still come")
        domain.drive(input, to: 6_001)
        XCTAssertEqual(log, ["took a", "work of a"])
    }

    /// What an input passed on, and how.
    private final class Passed {
        var forwarded: [Event<String>] = []
        var delivered: [String] = []
    }

    /// An element that goes on at once goes on in the very event it came in (`forward`: no new
    /// event, no copy of the element), and so does a late one within the allowance; one that
    /// waits for the watermark goes on later as a new event of its element (`deliver`).
    func testAnElementTakenAtOnceGoesOnInTheEventItCameIn() {
        let passed = Passed()
        func input(maxDelay: Int64) -> EventTimeDomain<String>.Input {
            EventTimeDomain<String>.Input(
                maxDelay: maxDelay, deliver: { passed.delivered.append($0) }, forward: { passed.forwarded.append($0) })
        }
        let atOnce = input(maxDelay: 0)
        atOnce.asTheyCome = true
        domain.add(atOnce)
        domain.allowedLateness = 5_000
        XCTAssertTrue(domain.take("a", in: .next("a"), at: 10_000, from: atOnce))
        XCTAssertTrue(domain.take("late", in: .next("late"), at: 7_000, from: atOnce), "within the allowance")
        XCTAssertFalse(domain.take("too late", in: .next("too late"), at: 1_000, from: atOnce))
        XCTAssertEqual(passed.forwarded, [.next("a"), .next("late")])
        XCTAssertEqual(passed.delivered, [])

        let other = EventTimeDomain<String>(base: TestScheduler())
        let waits = input(maxDelay: 10_000)
        other.add(waits)
        XCTAssertTrue(other.take("b", in: .next("b"), at: 20_000, from: waits))
        XCTAssertEqual(passed.delivered, [], "held until the watermark reaches it")
        other.end(waits)
        XCTAssertEqual(passed.delivered, ["b"])
        XCTAssertEqual(passed.forwarded, [.next("a"), .next("late")], "a held element goes on as a new event")
    }

    /// An input that has seen nothing on a clock restored by a checkpoint (a group's partition
    /// taken over, nothing new published to it) still lets the watermark go on once it is idle:
    /// what its last holder's windows wait for is then released.
    func testAnIdleInputThatSawNothingGoesOnFromARestoredClock() {
        let input = EventTimeDomain<String>.Input(maxDelay: 10_000) { _ in }
        domain.add(input)
        domain.clock.restore(clock: 60_000)
        domain.clock.schedule(after: .seconds(5)) { [unowned self] in log.append("window of 60,000 closed") }
        domain.idle(input, quietFor: 4_000)
        XCTAssertEqual(domain.clock.clock, 64_000, "the watermark goes on with the quiet time")
        XCTAssertEqual(log, [])
        domain.idle(input, quietFor: 5_001)
        XCTAssertEqual(log, ["window of 60,000 closed"])
    }

    /// What holds windows and keys on the clock is counted once however often it is given, and
    /// read when asked (each partition's copy of an aggregate gives the same holder).
    func testHoldersAreCountedOnceAndReadWhenAsked() {
        final class Holder: EventTimeHolding, @unchecked Sendable {
            var windowsOpen = 0
            var keysHeld = 0
        }
        let holder = Holder()
        domain.count(holder)
        domain.count(holder)
        holder.windowsOpen = 2
        holder.keysHeld = 7
        XCTAssertEqual(domain.held.windows, 2)
        XCTAssertEqual(domain.held.keys, 7)
    }
}
