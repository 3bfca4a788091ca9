import BinaryTestSupport
import Foundation
import XCTest

/// `lint`, `test` and `run` make the same checks of a pipeline file: every file of the invalid
/// corpus gets the same located diagnostics and exit 2 from each of them.
final class ConsistentChecksTests: BinaryTestCase {
    func testLintTestAndRunReportTheSameDiagnosticsForEveryInvalidFile() throws {
        let corpus = LintCorpusTests.corpusDirectory
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { $0.hasSuffix(".yaml") }
            .sorted()
        XCTAssertGreaterThanOrEqual(files.count, 120)
        for file in files {
            let path = corpus.appendingPathComponent(file).path
            let testFile = directory.appendingPathComponent("check.test.yaml")
            try "pipeline: \(path)\ntests:\n  - name: anything\n    expectCount: 0\n".write(
                to: testFile, atomically: true, encoding: .utf8)
            let lint = try runRivulet(["lint", path])
            let test = try runRivulet(["test", testFile.path])
            let run = try runRivulet(["run", path, "--clock", "virtual"])
            XCTAssertEqual(lint.status, 2, "\(file): lint")
            XCTAssertEqual(test.status, 2, "\(file): test")
            XCTAssertEqual(run.status, 2, "\(file): run")
            let expected = Self.diagnostics(lint.stderr, of: path)
            XCTAssertFalse(expected.isEmpty, "\(file): lint reported nothing")
            XCTAssertEqual(Self.diagnostics(test.stderr, of: path), expected, "\(file): test")
            XCTAssertEqual(Self.diagnostics(run.stderr, of: path), expected, "\(file): run")
        }
    }

    /// The `path:line:col: error: …` lines of `output`.
    static func diagnostics(_ output: String, of path: String) -> [String] {
        output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            $0.hasPrefix(path + ":") && $0.contains(": error: ")
        }
    }
}
