@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// The count of live sinks and disposables, and the leak check every runtime and pipeline test
/// ends with.
final class ResourcesTests: LeakCheckingTestCase {
    func testDebugBuildsCountSinksAndDisposablesUntilTheyAreFreed() throws {
        try XCTSkipUnless(Resources.isCounting, "release builds count nothing")
        let start = Resources.total
        let subject = PublishSubject<Int>()
        var lifetime: Lifetime? = Lifetime()
        subject.map { $0 * 2 }.filter { $0 > 0 }.subscribe(AnyObserver { _ in }, in: lifetime!)
        XCTAssertGreaterThan(Resources.total, start, "the lifetime and the map and filter sinks are alive")
        lifetime?.dispose()
        lifetime = nil
        XCTAssertEqual(Resources.total, start)
    }

    func testALeakedSubscriptionFailsTheCheck() throws {
        try XCTSkipUnless(Resources.isCounting, "release builds count nothing")
        let start = Resources.total
        weak var leaked: Lifetime?
        do {
            // A cycle nothing disposes: the lifetime holds a disposable whose action holds the lifetime.
            let lifetime = Lifetime()
            lifetime.add(AnonymousDisposable { _ = lifetime })
            leaked = lifetime
        }
        var reports: [String] = []
        LeakCheck.verify(since: start) { reports.append($0) }
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.contains("2 sink(s) or disposable(s) still alive") == true, "\(reports)")
        // Disposing breaks the cycle, so this test itself ends clean.
        leaked?.dispose()
        XCTAssertNil(leaked)
        reports = []
        LeakCheck.verify(since: start) { reports.append($0) }
        XCTAssertEqual(reports, [])
    }
}
