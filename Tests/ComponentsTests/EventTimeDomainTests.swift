import Pipeline
import Reactive
import ReactiveTesting
import XCTest

@testable import Components

/// A domain's driven input (a partition's: its watermark is given by `drive`, not read from its
/// elements) taking elements as they come.
final class EventTimeDomainTests: XCTestCase {
    private let domain = EventTimeDomain(base: TestScheduler())
    private var log: [String] = []
    /// How long after its element's time the work an element schedules is due.
    private var workAfter: RxTimeInterval = .zero

    private func drivenInput() -> EventTimeDomain.Input {
        let input = EventTimeDomain.Input(maxDelay: 0) { [unowned self] element in
            log.append("took \(element)")
            domain.clock.schedule(after: workAfter) { [unowned self] in log.append("work of \(element)") }
        }
        input.isDriven = true
        input.asTheyCome = true
        domain.add(input)
        return input
    }

    /// Work an element schedules for the current time runs before `take` returns, as on the
    /// stream's own domain (the step after a driven element is skipped only when nothing is due).
    func testWorkAnElementSchedulesForNowRunsBeforeTakeReturns() {
        let input = drivenInput()
        domain.drive(input, to: 1_000)
        XCTAssertTrue(domain.take(.string("a"), at: 1_000, from: input))
        XCTAssertEqual(log, ["took \"a\"", "work of \"a\""])
    }

    /// Work due later waits for the watermark the next drive gives.
    func testWorkDueLaterWaitsForTheNextDrive() {
        let input = drivenInput()
        workAfter = .seconds(5)
        domain.drive(input, to: 1_000)
        XCTAssertTrue(domain.take(.string("a"), at: 1_000, from: input))
        XCTAssertEqual(log, ["took \"a\""])
        domain.drive(input, to: 5_999)
        XCTAssertEqual(log, ["took \"a\""], "due at 6,000")
        domain.drive(input, to: 6_000)
        XCTAssertEqual(log, ["took \"a\"", "work of \"a\""])
    }
}
