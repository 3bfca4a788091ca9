import Components
import Pipeline
import XCTest

/// The pipelines in Pipelines/, run to completion on a virtual clock.
final class ExamplePipelineTests: XCTestCase {
    static let pipelines = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Pipelines")

    func testSearchAsYouTypeSearchesOnlySettledDistinctQueries() throws {
        let harness = try PipelineHarness().run(
            file: Self.pipelines.appendingPathComponent("search-as-you-type.yaml").path)
        XCTAssertEqual(
            harness.events("stdout"),
            [
                "880: {\"query\":\"climate\",\"results\":21}", "1980: {\"query\":\"weathe\",\"results\":18}",
                "2600: completed",
            ])
    }

    func testCarouselClampsTheIndexAndHidesButtons() throws {
        let harness = try PipelineHarness().run(file: Self.pipelines.appendingPathComponent("carousel.yaml").path)
        XCTAssertEqual(
            harness.events("stdout"),
            [
                "0: {\"index\":0,\"item\":\"Swift\",\"previousHidden\":true,\"nextHidden\":false}",
                "100: {\"index\":1,\"item\":\"RxSwift\",\"previousHidden\":false,\"nextHidden\":false}",
                "300: {\"index\":2,\"item\":\"Rivulet\",\"previousHidden\":false,\"nextHidden\":true}",
                "800: {\"index\":1,\"item\":\"RxSwift\",\"previousHidden\":false,\"nextHidden\":false}",
                "900: completed",
            ])
    }
}
