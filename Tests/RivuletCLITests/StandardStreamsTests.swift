import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// `stdin`, `stdout` and a piped `table`, through the binary.
final class StandardStreamsTests: XCTestCase {
    private func run(_ pipeline: String, arguments: [String] = ["--clock", "virtual"], input: String = "") throws
        -> ProcessResult
    {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-\(UUID().uuidString).yaml")
        try pipeline.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try runRivulet(["run", file.path] + arguments, stdin: input)
    }

    func testStdinLinesOnBothClocks() throws {
        let pipeline = "source: stdin\nops: [{ filter: len(.) > 0 }, { map: upper(.) }]\nsink: stdout\n"
        let lines = (0..<2000).map { "line \($0)" }.joined(separator: "\n") + "\n\n"
        for clock in ["real", "virtual"] {
            let result = try run(pipeline, arguments: ["--clock", clock], input: lines)
            XCTAssertEqual(result.status, 0)
            let received = result.stdout.split(separator: "\n")
            XCTAssertEqual(received.count, 2000, clock)
            XCTAssertEqual(received.last, "\"LINE 1999\"", clock)
        }
    }

    func testStdinJSONLinesAndAMalformedLine() throws {
        let good = try run(
            "source: { stdin: jsonl }\nops: [{ map: .a }]\nsink: stdout\n", input: "{\"a\": 1}\n{\"a\": 2}\n")
        XCTAssertEqual(good.status, 0)
        XCTAssertEqual(good.stdout, "1\n2\n")
        let bad = try run("source: { stdin: jsonl }\nsink: stdout\n", input: "{\"a\": 1}\nnot json\n")
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stdout, "{\"a\":1}\n")
        assertContains(bad.stderr, "standard input line 2: invalid literal, expected 'null' at byte 0")
    }

    func testStdoutPrettyAndTemplate() throws {
        let source = "source: { events: [{ at: 0ms, next: { title: Rx, n: [1, 2] } }] }\n"
        let pretty = try run(source + "sink: { stdout: pretty }\n")
        XCTAssertEqual(pretty.stdout, "{\n  \"title\": \"Rx\",\n  \"n\": [\n    1,\n    2\n  ]\n}\n")
        let template = try run(source + "sink: { stdout: { template: \"{{ .title }} has {{ len(.n) }}\" } }\n")
        XCTAssertEqual(template.stdout, "Rx has 2\n")
    }

    func testPipedTableIsPlainTextWithEllipsisMaxRowsAndEmptyText() throws {
        let long = try run(
            "source: stdin\nops: [{ map: \"[{t: ., n: len(.)}]\" }]\nsink: { table: { columns: [t, n], maxWidth: 16 } }\n",
            input: "a fairly long title indeed\n")
        XCTAssertEqual(long.status, 0)
        XCTAssertFalse(long.stdout.contains("\u{1B}"), "no escape codes when piped")
        XCTAssertEqual(long.stdout, "t             n\n------------  --\na fairly lo…  26\n\n")
        let lists = try run(
            "source: { events: [{ at: 0ms, next: [{ a: 1 }, { a: 2 }, { a: 3 }] }, { at: 1ms, next: [] }] }\n"
                + "sink: { table: { columns: [a], maxRows: 2, empty: nothing found } }\n")
        XCTAssertEqual(
            lists.stdout,
            "a\n-\n1\n2\n… 1 more row held back (maxRows: 2); raise maxRows to show them\n\na\n-\nnothing found\n\n")
    }

    func testAColumnIsNeverWiderThanTheTable() throws {
        // width: 100000000 wrote 100 MB of padding a row, and a signal waited 20 s for it.
        let started = Date()
        let wide = try run(
            "source: { events: [{ at: 0ms, next: { a: x, b: y } }, { at: 0ms, next: [{ a: x, b: y }] }] }\n"
                + "sink: { table: { columns: [{ title: A, value: .a, width: 100000000 }, b], maxWidth: 30 } }\n")
        XCTAssertEqual(wide.status, 0, wide.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        let lines = wide.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 6, wide.stdout)
        XCTAssertTrue(lines.allSatisfy { $0.count <= 32 }, lines.map { "\($0.count)" }.joined(separator: " "))
    }
}
