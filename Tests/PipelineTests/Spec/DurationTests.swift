@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// Durations as a file writes them, as messages show them exactly, and as people read them.
final class DurationTests: LeakCheckingTestCase {
    func testWrittenDurationsReadBackExactly() {
        for text in ["250ms", "1.5s", "2m", "1h"] {
            let duration = DurationSyntax.parse(text)
            XCTAssertNotNil(duration, text)
            XCTAssertEqual(duration.flatMap { DurationSyntax.parse(DurationSyntax.format($0)) }, duration, text)
        }
        XCTAssertEqual(DurationSyntax.format(.microseconds(166_656)), "166.656ms")
    }

    func testAnApproximateDurationIsRoundedForPeople() {
        XCTAssertEqual(DurationSyntax.approximate(.nanoseconds(166_656_123)), "167ms")
        XCTAssertEqual(DurationSyntax.approximate(.nanoseconds(400_000)), "0ms")
        XCTAssertEqual(DurationSyntax.approximate(.milliseconds(999)), "999ms")
        XCTAssertEqual(DurationSyntax.approximate(.nanoseconds(1_234_567_890)), "1.2s")
        XCTAssertEqual(DurationSyntax.approximate(.milliseconds(2_960)), "3s")
        XCTAssertEqual(DurationSyntax.approximate(.seconds(61)), "61s")
        XCTAssertEqual(DurationSyntax.approximate(.seconds(3600)), "60m")
        XCTAssertEqual(DurationSyntax.approximate(.milliseconds(59_960)), "60s")
    }
}
