import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// `--log-level`, `--log-format` and `RIVULET_LOG_LEVEL` through the binary: what a run writes on
/// standard error is filtered by level, and in JSON every line is one object a collector can read.
final class LoggingTests: BinaryTestCase {
    /// A run that fails on its second element (`len(42)`), on the virtual clock.
    private let failing =
        "name: failing\nsource: { events: [{ at: 0ms, next: \"abc\" }, { at: 10ms, next: 42 }] }\nops:\n  - map: len(.)\nsink: stdout\n"

    /// A run that drops one element under `onError: skip` (a warning) and logs each element.
    private let skipping = """
        source: { fixture: { path: numbers.json } }
        ops:
          - log: seen
          - map: 10 / len(.)
            onError: skip
        sink: stdout
        """

    override func setUpWithError() throws {
        try super.setUpWithError()
        try "[\"ab\", 7, \"abcde\"]".write(
            to: directory.appendingPathComponent("numbers.json"), atomically: true, encoding: .utf8)
    }

    private func objects(_ stderr: String, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]]
    {
        try stderr.split(separator: "\n").map { text in
            let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
            return try XCTUnwrap(parsed as? [String: Any], "not a JSON object: \(text)", file: file, line: line)
        }
    }

    func testJSONLogIsOneObjectPerLineWithTheErrorsPlaceAndTheSummary() throws {
        let result = try run(failing, ["--clock", "virtual", "--log-format", "json"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "3\n", "standard output is the pipeline's, untouched")
        let lines = try objects(result.stderr)
        XCTAssertEqual(lines.count, 2, result.stderr)
        let error = lines[0]
        XCTAssertEqual(error["level"] as? String, "error")
        XCTAssertEqual(
            error["message"] as? String,
            "map: len() expects a string, list or object, got number 42 in 'len(.)' (element: 42)")
        XCTAssertEqual(error["pipeline"] as? String, "failing")
        XCTAssertTrue((error["file"] as? String)?.hasSuffix(".yaml") == true, "\(error)")
        XCTAssertEqual(error["line"] as? Int, 4)
        XCTAssertEqual(error["column"] as? Int, 5)
        let time = try XCTUnwrap(error["time"] as? String)
        XCTAssertNotNil(
            time.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression), time)
        let summary = lines[1]
        XCTAssertEqual(summary["level"] as? String, "info")
        XCTAssertEqual(summary["ending"] as? String, "failed")
        XCTAssertEqual(summary["read"] as? Int, 2)
        XCTAssertEqual(summary["written"] as? Int, 1)
        XCTAssertEqual(summary["errors"] as? Int, 1)
        XCTAssertNotNil(summary["seconds"] as? Double)
    }

    func testJSONLogCarriesTheComponentThatLoggedAndDiagnosticsOfAnInvalidFile() throws {
        let result = try run(skipping, ["--clock", "virtual", "--log-format", "json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try objects(result.stderr)
        let logged = lines.filter { $0["component"] as? String == "log" }
        XCTAssertEqual(logged.count, 4, "three elements and the completion:\n\(result.stderr)")
        XCTAssertEqual(logged.first?["line"] as? Int, 3)
        XCTAssertEqual(logged.first?["column"] as? Int, 5)
        XCTAssertTrue((logged.first?["message"] as? String)?.hasPrefix("[seen] 0ms next \"ab\"") == true, "\(lines)")
        let warning = try XCTUnwrap(lines.first { $0["level"] as? String == "warning" }, result.stderr)
        XCTAssertTrue((warning["message"] as? String)?.hasPrefix("map skipped 1 element") == true, "\(warning)")
        XCTAssertEqual(warning["line"] as? Int, 4)

        // --summary in JSON: an object a component, with its counts as numbers.
        let table = try objects(try run(skipping, ["--clock", "virtual", "--log-format", "json", "--summary"]).stderr)
        let rows = table.filter { $0["message"] as? String == "component summary" }
        XCTAssertEqual(rows.map { $0["place"] as? String }, ["source", "ops.0", "ops.1", "sink"])
        XCTAssertEqual(rows[2]["in"] as? Int, 3)
        XCTAssertEqual(rows[2]["out"] as? Int, 2)
        XCTAssertNil(rows[3]["out"], "a sink has no output")

        let invalid = try run("source: { fixture: [1] }\nops:\n  - mapp: .\nsink: stdout\n", ["--log-format", "json"])
        XCTAssertEqual(invalid.status, 2)
        let diagnostics = try objects(invalid.stderr)
        XCTAssertEqual(diagnostics.count, 2, invalid.stderr)
        XCTAssertEqual(diagnostics[1]["message"] as? String, "unknown operator 'mapp'; did you mean 'map'?")
        XCTAssertEqual(diagnostics[1]["line"] as? Int, 3)
        XCTAssertEqual(diagnostics[1]["note"] as? String, "see 'rivulet components' for every operator")
    }

    func testLevelWarningSilencesInfoAndErrorSilencesWarnings() throws {
        let info = try run(skipping, ["--clock", "virtual"])
        assertContains(info.stderr, "[seen] 0ms next \"ab\"", "run completed: 3 elements read, 2 written, 1 error in ")

        for warning in [
            try run(skipping, ["--clock", "virtual", "--log-level", "warning"]),
            try run(skipping, ["--clock", "virtual"], environment: ["RIVULET_LOG_LEVEL": "warning"]),
        ] {
            XCTAssertEqual(warning.status, 0)
            XCTAssertEqual(warning.stdout, "5\n2\n")
            let lines = warning.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, warning.stderr)
            XCTAssertTrue(lines.first?.contains(": warning: map skipped 1 element") == true, warning.stderr)
        }
        // The flag wins over the variable.
        let flag = try run(
            skipping, ["--clock", "virtual", "--log-level", "error"], environment: ["RIVULET_LOG_LEVEL": "debug"])
        XCTAssertEqual(flag.stderr, "")
        let errors = try run(failing, ["--clock", "virtual", "--log-level", "error"])
        XCTAssertEqual(errors.status, 1)
        XCTAssertEqual(errors.stderr.split(separator: "\n").count, 1, "the error, not the summary: \(errors.stderr)")
    }

    func testAnUnknownLevelIsAnErrorOfTheCommandLine() throws {
        let variable = try run(skipping, [], environment: ["RIVULET_LOG_LEVEL": "loud"])
        XCTAssertEqual(variable.status, 2)
        XCTAssertEqual(
            variable.stderr, "error: RIVULET_LOG_LEVEL must be trace, debug, info, warning or error; got 'loud'\n")
        let flag = try run(skipping, ["--log-level", "loud"])
        XCTAssertEqual(flag.status, 2)
        assertContains(flag.stderr, "--log-level")
    }
}
