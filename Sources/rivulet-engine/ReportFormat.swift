import ArgumentParser
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import Tooling

/// `--format` of `test` and `lint`: text for people, JSON and JUnit XML for CI.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, junit

    /// A diagnostic as a JSON object: file, line, column, severity, message, note.
    static func json(_ diagnostic: Diagnostic) -> Value {
        var object = JSONObject()
        object["file"] = .string(diagnostic.location.file)
        object["line"] = .int(diagnostic.location.line)
        object["column"] = .int(diagnostic.location.column)
        object["severity"] = .string(diagnostic.severity == .error ? "error" : "warning")
        object["message"] = .string(diagnostic.message)
        if let note = diagnostic.note { object["note"] = .string(note) }
        return .object(object)
    }

    /// `value` as one line of JSON.
    static func text(_ value: Value) -> String {
        var bytes: [UInt8] = []
        JSONSerializer.write(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self) + "\n"
    }

    /// `text` escaped for an XML attribute or element.
    static func xml(_ text: String) -> String { XMLText.escape(text) }

    /// A JUnit XML document of suites (one per file), each with its cases: a failure carries its
    /// message and its report, an error (an invalid file) its diagnostics.
    static func junit(_ suites: [(name: String, cases: [(name: String, failure: String?, error: String?)])]) -> String {
        let tests = suites.reduce(0) { $0 + $1.cases.count }
        let failures = suites.reduce(0) { $0 + $1.cases.filter { $0.failure != nil }.count }
        let errors = suites.reduce(0) { $0 + $1.cases.filter { $0.error != nil }.count }
        var lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<testsuites name=\"rivulet\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\">",
        ]
        for suite in suites {
            let suiteFailures = suite.cases.filter { $0.failure != nil }.count
            let suiteErrors = suite.cases.filter { $0.error != nil }.count
            lines.append(
                "  <testsuite name=\"\(xml(suite.name))\" tests=\"\(suite.cases.count)\" failures=\"\(suiteFailures)\" "
                    + "errors=\"\(suiteErrors)\">")
            for testCase in suite.cases {
                let head = "    <testcase classname=\"\(xml(suite.name))\" name=\"\(xml(testCase.name))\""
                if let failure = testCase.failure {
                    let first = failure.split(separator: "\n").first.map(String.init) ?? "failed"
                    lines.append(head + ">")
                    lines.append("      <failure message=\"\(xml(first))\">\(xml(failure))</failure>")
                    lines.append("    </testcase>")
                } else if let error = testCase.error {
                    let first = error.split(separator: "\n").first.map(String.init) ?? "invalid"
                    lines.append(head + ">")
                    lines.append("      <error message=\"\(xml(first))\">\(xml(error))</error>")
                    lines.append("    </testcase>")
                } else {
                    lines.append(head + "/>")
                }
            }
            lines.append("  </testsuite>")
        }
        lines.append("</testsuites>")
        return lines.joined(separator: "\n") + "\n"
    }
}
