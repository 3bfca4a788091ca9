import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// Runs `rivulet lint` on every file of the invalid-pipeline corpus and checks that it reports
/// exactly the diagnostics the file lists (`# expect: LINE:COL: message`), in order, with exit 2
/// and never a trap.
final class LintCorpusTests: XCTestCase {
    static var corpusDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("LintCorpus")
    }

    func testEveryInvalidFileGetsItsLocatedDiagnostics() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpusDirectory.path)
            .filter { $0.hasSuffix(".yaml") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 120)
        for file in files {
            let path = Self.corpusDirectory.appendingPathComponent(file).path
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
            let expected = text.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("# expect: ") else { return nil }
                return String(line.dropFirst("# expect: ".count))
            }
            XCTAssertFalse(expected.isEmpty, "\(file) lists no expected diagnostic")
            let result = try runRivulet(["lint", path])
            XCTAssertEqual(result.status, 2, "\(file): exit status")
            let actual = result.stderr.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix(path + ":") else { return nil }
                let rest = line.dropFirst(path.count + 1)
                guard let range = rest.range(of: ": error: ") else { return nil }
                return String(rest[..<range.lowerBound]) + ": " + String(rest[range.upperBound...])
            }
            XCTAssertEqual(actual, expected, "\(file)")
            for trap in ["Fatal error", "Stack dump", "Illegal instruction", "Segmentation fault"] {
                XCTAssertFalse(result.stderr.contains(trap), "\(file): \(trap)")
            }
            XCTAssertTrue(result.stderr.contains("^"), "\(file): the source line with a caret")
        }
    }

    func testLintReportsEveryFileAndSucceedsOnValidOnes() throws {
        let valid = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-valid-\(getpid()).yaml")
        try "source: { events: [{ at: 0ms, next: a }] }\nsink: stdout\n".write(
            to: valid, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: valid) }
        let clean = try runRivulet(["lint", valid.path])
        XCTAssertEqual(clean.status, 0)
        XCTAssertEqual(clean.stdout, "\(valid.path): ok\n")
        XCTAssertEqual(clean.stderr, "")
        let first = Self.corpusDirectory.appendingPathComponent("01-misspelt-operator.yaml").path
        let second = Self.corpusDirectory.appendingPathComponent("43-several-errors.yaml").path
        let mixed = try runRivulet(["lint", first, valid.path, second])
        XCTAssertEqual(mixed.status, 2)
        XCTAssertTrue(mixed.stderr.hasSuffix("5 errors in 2 files\n"), mixed.stderr)
        XCTAssertTrue(mixed.stdout.contains("\(valid.path): ok"))
    }

    func testHugeFilesAndManyErrorsAreBounded() throws {
        let zero = try runRivulet(["lint", "/dev/zero"], timeout: 30)
        XCTAssertEqual(zero.status, 2)
        assertContains(zero.stderr, "/dev/zero:1:1: error: the file is larger than 4 MiB")
        let many = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-many-\(getpid()).yaml")
        let ops = String(repeating: "  - debounse: 1s\n", count: 3000)
        try "source: { events: [{ at: 0ms, next: a }] }\nops:\n\(ops)sink: stdout\n".write(
            to: many, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: many) }
        let result = try runRivulet(["lint", many.path], timeout: 60)
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderr.components(separatedBy: ": error: ").count - 1, 100, "the first 100 are shown")
        assertContains(result.stderr, "… and 2900 more; fix these first")
        XCTAssertTrue(result.stderr.hasSuffix("3000 errors in 1 file\n"), result.stderr)
    }

    func testPipedOutputHasNoColourAndMissingFilesAreReported() throws {
        let result = try runRivulet(["lint", "/nonexistent/pipeline.yaml"])
        XCTAssertEqual(result.status, 2)
        assertContains(result.stderr, "/nonexistent/pipeline.yaml:1:1: error: cannot read the file")
        XCTAssertFalse(result.stderr.contains("\u{1B}["))
    }
}
