@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

final class DiagnosticTests: LeakCheckingTestCase {
    func testRendersTheLineAndACaretUnderTheColumn() {
        let diagnostic = Diagnostic.error(
            "unknown operator 'debounse'; did you mean 'debounce'?",
            at: SourceLocation(file: "p.yaml", line: 2, column: 5),
            note: "operators are listed by 'rivulet components'")
        let text = DiagnosticRenderer(useColor: false).render(diagnostic, source: "ops:\n  - debounse: 1s\n")
        XCTAssertEqual(
            text,
            """
            p.yaml:2:5: error: unknown operator 'debounse'; did you mean 'debounce'?
              - debounse: 1s
                ^
            note: operators are listed by 'rivulet components'

            """)
    }

    func testColourOnlyWhenAsked() {
        let diagnostic = Diagnostic.error("bad", at: SourceLocation(file: "p.yaml", line: 1, column: 1))
        XCTAssertTrue(DiagnosticRenderer(useColor: true).render(diagnostic, source: "x").contains("\u{1B}["))
        XCTAssertFalse(DiagnosticRenderer(useColor: false).render(diagnostic, source: "x").contains("\u{1B}["))
    }

    func testSuggestionsFindTheIntendedName() {
        let names = ["debounce", "distinctUntilChanged", "flatMapLatest", "filter", "map", "throttle"]
        XCTAssertEqual(Suggestions.closest(to: "debounse", in: names), "debounce")
        XCTAssertEqual(Suggestions.closest(to: "flatmaplatest", in: names), "flatMapLatest")
        XCTAssertEqual(Suggestions.closest(to: "fitler", in: names), "filter")
        XCTAssertEqual(Suggestions.closest(to: "distinct", in: names), nil)
        XCTAssertEqual(Suggestions.closest(to: "zzz", in: names), nil)
        XCTAssertEqual(Suggestions.editDistance("ab", "ba"), 1)
    }
}
