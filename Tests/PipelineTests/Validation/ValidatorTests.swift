@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

/// The validator's passes on their own: every error collected and located, names suggested,
/// streams ordered by what they read, loops refused.
final class ValidatorTests: LeakCheckingTestCase {
    private let fixtures = CompilerFixtures()

    private func messages(_ text: String) -> [String] {
        fixtures.load(text).diagnostics.map { "\($0.location.line):\($0.location.column): \($0.message)" }
    }

    func testAValidFileGivesAPipelineAndNoDiagnostics() {
        let loaded = fixtures.load("source: { numbers: 2 }\nops: [{ times: 3 }]\nsink: collect\n")
        XCTAssertNotNil(loaded.pipeline)
        XCTAssertEqual(loaded.diagnostics.map(\.message), [])
    }

    func testEveryErrorIsCollectedAndLocatedAndAnUnknownNameGetsASuggestion() {
        let found = messages("source: { numbers: { count: lots } }\nops: [{ tims: 3 }]\nsink: collect\n")
        XCTAssertEqual(found.count, 2, "\(found)")
        XCTAssertTrue(found[0].hasPrefix("1:29: "), found[0])
        XCTAssertTrue(found[1].hasPrefix("2:9: ") && found[1].contains("times"), found[1])
    }

    func testAMissingRequiredParameterIsNamed() {
        let found = messages("source: numbers\nops: [{ times: {} }]\nsink: collect\n")
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(found[0].contains("by"), found[0])
    }

    func testStreamsAreOrderedSoThatEachComesAfterWhatItReadsAndALoopIsAnError() {
        let loaded = fixtures.load(
            """
            streams:
              doubled:
                source: { stream: base }
                ops: [{ times: 2 }]
              base:
                source: numbers
            sinks:
              - { stream: doubled, collect: d }

            """)
        XCTAssertEqual(loaded.pipeline?.streams.map(\.name), ["base", "doubled"], "\(loaded.diagnostics)")
        let loop = messages(
            """
            streams:
              a:
                source: { stream: b }
              b:
                source: { stream: a }
            sinks:
              - { stream: a, collect: x }

            """)
        XCTAssertEqual(loop.count, 1, "\(loop)")
        XCTAssertTrue(loop[0].contains("a") && loop[0].contains("b"), loop[0])
    }
}
