import RivuletTestSupport
import XCTest

/// The status sink, piped: each status is a line on standard error (the pipeline's log); a
/// cleared status writes nothing.
final class StatusSinkTests: LeakCheckingTestCase {
    func testStatusesGoToTheLogAndClearingWritesNothing() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: true }, { at: 5ms, next: false }, { at: 6ms, next: "error: x" }, { at: 7ms, next: "" }] }
            sink: { status: "{{ . == true ? 'searching…' : . }}" }
            """)
        XCTAssertEqual(harness.logged, ["searching…", "error: x"])
    }
}
