import PipelineTesting
import XCTest

@testable import TextPlugin

/// The example plugin's operators, registered through its entry point and run on a virtual
/// clock by the host `rivulet` runs pipelines with.
final class TextPluginTests: XCTestCase {
    func testTheEntryPointRegistersItsOperators() throws {
        let bench = try PipelineTestBench(plugin: rivuletPluginRegister)
        XCTAssertEqual(Set(bench.componentNames), ["slugify", "wordCount", "countBy", "events", "record"])
    }

    func testCountByCountsEachKeySoFar() throws {
        let run = try PipelineTestBench(plugin: rivuletPluginRegister).run(
            """
            source: { events: { marbles: "abac|", values: { a: { u: x }, b: { u: y }, c: { u: x } } } }
            ops: [{ countBy: .u }]
            sink: record
            """)
        XCTAssertEqual(
            run.values,
            [
                ["key": "x", "count": 1], ["key": "y", "count": 1], ["key": "x", "count": 2], ["key": "x", "count": 3],
            ])
        XCTAssertEqual(run.outcome, .completed)
    }

    func testSlugify() throws {
        let bench = try PipelineTestBench(plugin: rivuletPluginRegister)
        let run = try bench.run(
            """
            source: { events: { marbles: "a-b|", values: { a: "Hello, World!", b: "  Swift  6.3 " } } }
            ops: [slugify]
            sink: record
            """)
        XCTAssertEqual(run.values, ["hello-world", "swift-6-3"])
        XCTAssertEqual(run.timedValues.map(\.milliseconds), [0, 20])
        XCTAssertEqual(run.outcome, .completed)
        let field = try bench.run(
            """
            source: { events: [{ at: 0ms, next: { title: "A B" } }, { at: 5ms, complete: true }] }
            ops: [{ slugify: { field: title, separator: _ } }]
            sink: record
            """)
        XCTAssertEqual(field.values, [["title": "A B", "titleSlug": "a_b"]])
    }

    func testWordCount() throws {
        let run = try PipelineTestBench(plugin: rivuletPluginRegister).run(
            """
            source: { events: { marbles: "ab|", values: { a: "one  two\\tthree", b: "" } } }
            ops: [wordCount]
            sink: record
            """)
        XCTAssertEqual(run.values, [["text": "one  two\tthree", "words": 3], ["text": "", "words": 0]])
    }

    func testAWrongParameterIsReportedWithItsLineAndColumn() throws {
        let bench = try PipelineTestBench(plugin: rivuletPluginRegister)
        XCTAssertThrowsError(
            try bench.run(
                """
                source: { events: { marbles: "a|" } }
                ops: [{ slugify: { feild: title } }]
                sink: record
                """)
        ) { error in
            XCTAssertTrue("\(error)".contains("pipeline.yaml:2:"), "\(error)")
            XCTAssertTrue("\(error)".contains("feild"), "\(error)")
        }
    }
}
