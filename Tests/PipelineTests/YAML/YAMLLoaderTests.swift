@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

final class YAMLLoaderTests: LeakCheckingTestCase {
    private func load(_ text: String, environment: [String: String] = [:]) throws -> YAMLNode? {
        try YAMLLoader(file: "p.yaml", environment: environment).load(text)
    }

    private func diagnostics(_ text: String, environment: [String: String] = [:]) -> [Diagnostic] {
        do {
            _ = try load(text, environment: environment)
            return []
        } catch {
            return (error as? DiagnosticList)?.diagnostics ?? []
        }
    }

    func testEveryNodeKnowsWhereItStarts() throws {
        let root = try XCTUnwrap(try load("name: demo\nops:\n  - filter: len(.) >= 3\n  - debounce: 500ms\n"))
        XCTAssertEqual(root["name"]?.location, SourceLocation(file: "p.yaml", line: 1, column: 7))
        let ops = try XCTUnwrap(root["ops"]?.items)
        XCTAssertEqual(ops[1].location.line, 4)
        XCTAssertEqual(ops[1]["debounce"]?.location, SourceLocation(file: "p.yaml", line: 4, column: 15))
        XCTAssertEqual(ops[0]["filter"]?.scalar, "len(.) >= 3")
    }

    func testEveryNodeKnowsWhereItEnds() throws {
        let root = try XCTUnwrap(try load("a: [1, {b: 2}]   # note\nc:\n  - x: 'é'\n    y: zz\nd: end\n"))
        func end(_ node: YAMLNode?) -> String { node.map { "\($0.end.line):\($0.end.column)" } ?? "-" }
        XCTAssertEqual(end(root["a"]), "1:15", "a flow list ends after its bracket")
        XCTAssertEqual(end(root["c"]), "4:10", "a block list ends where its last item does")
        XCTAssertEqual(end(root["c"]?.items?.first?["x"]), "3:11", "a quoted scalar ends after its quote")
        XCTAssertEqual(end(root["d"]), "5:7")
    }

    func testPlainScalarsAreTypedAndQuotedOnesAreStrings() throws {
        let root = try XCTUnwrap(try load("a: 3\nb: '3'\nc: true\nd: 1.5\ne: ~\nf: 500ms\ng: yes\n"))
        XCTAssertEqual(root.toValue(), ["a": 3, "b": "3", "c": true, "d": 1.5, "e": nil, "f": "500ms", "g": "yes"])
    }

    func testQuotedScalarsPointInsideTheQuotes() throws {
        let root = try XCTUnwrap(try load("filter: \"len(.) > 3\"\n"))
        XCTAssertEqual(root["filter"]?.location.column, 9)
        XCTAssertEqual(root["filter"]?.contentLocation.column, 10)
    }

    func testAnchorsAliasesAndMergeKeys() throws {
        let text = """
            defaults: &defaults
              tick: 10ms
              hot: true
            first: *defaults
            second:
              <<: *defaults
              hot: false
            """
        let root = try XCTUnwrap(try load(text))
        XCTAssertEqual(root["first"]?.toValue(), ["tick": "10ms", "hot": true])
        XCTAssertEqual(root["second"]?.toValue(), ["hot": false, "tick": "10ms"])
    }

    func testDuplicateKeysAreReportedAtTheSecondKey() {
        let found = diagnostics("name: a\nsource: x\nname: b\n")
        XCTAssertEqual(found.map(\.description), ["p.yaml:3:1: error: duplicate key 'name' (first at line 1)"])
    }

    func testTabsInIndentationAreReportedEachOne() {
        let found = diagnostics("ops:\n\t- filter: x\n  \t- map: y\n")
        XCTAssertEqual(
            found.map(\.description),
            [
                "p.yaml:2:1: error: tab character in indentation; YAML indents with spaces",
                "p.yaml:3:3: error: tab character in indentation; YAML indents with spaces",
            ])
    }

    func testSyntaxErrorsAreLocated() {
        let found = diagnostics("ops:\n  - filter: x\n bad: indentation\n")
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.location.line, 3)
        XCTAssertTrue(found.first?.message.contains("did not find expected") == true, "\(found)")
        let flow = diagnostics("values: [a, b\nnext: 1\n")
        XCTAssertEqual(flow.first?.location.line, 2)
    }

    func testSecondDocumentIsAnError() {
        let found = diagnostics("a: 1\n---\nb: 2\n")
        XCTAssertEqual(found.first?.location.line, 2)
        XCTAssertTrue(found.first?.message.contains("one YAML document") == true)
    }

    func testEnvironmentVariablesWithDefaultsAndMissingOnesNamed() throws {
        let root = try XCTUnwrap(
            try load(
                "key: ${API_KEY}\nurl: \"${BASE:-http://127.0.0.1}/x\"\nlit: $${NOT}\n", environment: ["API_KEY": "k1"])
        )
        XCTAssertEqual(root["key"]?.scalar, "k1")
        XCTAssertEqual(root["url"]?.scalar, "http://127.0.0.1/x")
        XCTAssertEqual(root["lit"]?.scalar, "${NOT}")
        let found = diagnostics("a: x ${MISSING_ONE}\nb: \"${MISSING_TWO}\"\n")
        XCTAssertEqual(
            found.map(\.description),
            [
                "p.yaml:1:6: error: environment variable 'MISSING_ONE' is not set",
                "p.yaml:2:5: error: environment variable 'MISSING_TWO' is not set",
            ])
        let required = diagnostics(
            "a: ${TOKEN:?set TOKEN to your API token}\nb: ${EMPTY:?}\nc: ${SET:?never shown}\n",
            environment: ["EMPTY": "", "SET": "yes"])
        XCTAssertEqual(
            required.map(\.description),
            [
                "p.yaml:1:4: error: set TOKEN to your API token",
                "p.yaml:2:4: error: environment variable 'EMPTY' is not set",
            ])
    }

    func testEmptyDocumentIsNil() throws {
        XCTAssertNil(try load(""))
        XCTAssertNil(try load("# only a comment\n"))
    }
}
