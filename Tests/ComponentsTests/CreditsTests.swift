import Dispatch
import RivuletTestSupport
import XCTest

@testable import Components

/// A semaphore of credits freed with credits still taken (a run ended while its reader waited
/// for room): it must not trap, as one made with `DispatchSemaphore(value:)` does.
final class CreditsTests: LeakCheckingTestCase {
    func testCreditsAreTakenUpToTheCountAndTheSemaphoreMayBeFreedWithSomeTaken() {
        var credits: DispatchSemaphore? = .credits(3)
        for _ in 0..<3 { XCTAssertEqual(credits?.wait(timeout: .now()), .success) }
        XCTAssertEqual(credits?.wait(timeout: .now()), .timedOut)
        credits = nil
        XCTAssertNil(credits)
    }
}
