@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

@_spi(Host) @testable import Tooling

/// `rivulet test --update`'s rewriting of `expect` lists, in both styles, everything else kept.
final class ExpectationUpdateTests: LeakCheckingTestCase {
    private let events: [PipelineTestFile.TimedEvent] = [
        .init(microseconds: 1500, kind: .next(["naïve": "a: b", "n": [1, 2.5, nil, true]])),
        .init(microseconds: 2000, kind: .error("boom \"x\"")),
    ]

    private func rewrite(_ text: String) throws -> String {
        let root = try XCTUnwrap(try YAMLLoader(file: "t.yaml", environment: [:]).load(text))
        let node = try XCTUnwrap(root["tests"]?.items?.first?["expect"])
        return ExpectationUpdate.apply([(node, events)], to: text)
    }

    func testAFlowListBecomesABlockListUnderItsKeyAndABlockListKeepsItsIndentation() throws {
        XCTAssertEqual(
            try rewrite("# é\ntests:\n  - expect: [{ at: 0ms, next: ü }]  # c\n    name: x\n"),
            "# é\ntests:\n  - expect:\n      - { at: 1.5ms, next: {\"naïve\": \"a: b\", \"n\": [1, 2.5, null, true]} }\n"
                + "      - { at: 2ms, error: \"boom \\\"x\\\"\" }  # c\n    name: x\n")
        XCTAssertEqual(
            try rewrite("tests:\n  - name: x\n    expect: []\n"),
            "tests:\n  - name: x\n    expect:\n      - { at: 1.5ms, next: {\"naïve\": \"a: b\", \"n\": [1, 2.5, null, true]} }\n"
                + "      - { at: 2ms, error: \"boom \\\"x\\\"\" }\n")
        XCTAssertEqual(
            try rewrite("tests:\n  - expect:\n      - { at: 0ms, next: 1 }\n    name: x\n"),
            "tests:\n  - expect:\n      - { at: 1.5ms, next: {\"naïve\": \"a: b\", \"n\": [1, 2.5, null, true]} }\n"
                + "      - { at: 2ms, error: \"boom \\\"x\\\"\" }\n    name: x\n")
    }

    func testBlockMappingEntriesStayBlockMappings() throws {
        let text = try rewrite("tests:\n  - expect:\n      - at: 0ms\n        next: 1\n    name: x\n")
        XCTAssertEqual(
            text,
            "tests:\n  - expect:\n      - at: 1.5ms\n        next: {\"naïve\": \"a: b\", \"n\": [1, 2.5, null, true]}\n"
                + "      - at: 2ms\n        error: \"boom \\\"x\\\"\"\n    name: x\n")
        let root = try YAMLLoader(file: "t.yaml", environment: [:]).load("pipeline: p.yaml\n" + text)
        let (parsed, diagnostics) = PipelineTestFile.parse(root, file: "t.yaml", baseDirectory: ".")
        XCTAssertEqual(diagnostics, [])
        XCTAssertEqual(parsed?.cases.first?.expect, events)
    }

    func testTheWrittenEventsReadBackAsTheSameTimeline() throws {
        let text = try rewrite("pipeline: p.yaml\ntests:\n  - name: x\n    expect: []\n")
        let root = try YAMLLoader(file: "t.yaml", environment: [:]).load(text)
        let (parsed, diagnostics) = PipelineTestFile.parse(root, file: "t.yaml", baseDirectory: ".")
        XCTAssertEqual(diagnostics, [])
        XCTAssertEqual(parsed?.cases.first?.expect, events)
    }
}
