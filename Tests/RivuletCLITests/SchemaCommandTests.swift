import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet schema`: the JSON Schemas of pipeline and test files, checked by a real JSON Schema
/// validator (Python's jsonschema, with libyaml's parser as Rivulet's): every pipeline and test
/// file of the repository is valid, and a corpus of wrong files is refused.
final class SchemaCommandTests: BinaryTestCase {
    /// A Python with jsonschema and PyYAML: this machine's, or a virtual environment with them
    /// installed from the package index.
    private func python() throws -> String {
        let check = try ChildProcess(
            executable: "/usr/bin/env", arguments: ["python3", "-c", "import jsonschema, yaml"], input: .null)
        if check.communicate(timeout: 30).termination == .exited(0) { return "python3" }
        let environment = directory.appendingPathComponent("venv").path
        let install = try ChildProcess(
            executable: "/bin/sh",
            arguments: [
                "-c", "python3 -m venv '\(environment)' && '\(environment)/bin/pip' install -q jsonschema pyyaml",
            ], input: .null)
        let installed = install.communicate(timeout: 300)
        XCTAssertEqual(
            installed.termination, .exited(0), String(decoding: installed.standardError, as: UTF8.self))
        return "\(environment)/bin/python3"
    }

    private func validate(_ schema: String, _ files: [String], invalid: Bool = false) throws -> ProcessResult {
        let script = Repository.root.appendingPathComponent("scripts/validate-schema.py").path
        let process = try ChildProcess(
            executable: "/usr/bin/env",
            arguments: [try python(), script] + (invalid ? ["--invalid"] : []) + [schema] + files, input: .null)
        let ended = process.communicate(timeout: 120)
        return ProcessResult(
            status: ended.termination == .exited(0) ? 0 : 1,
            stdout: String(decoding: ended.standardOutput, as: UTF8.self),
            stderr: String(decoding: ended.standardError, as: UTF8.self))
    }

    private func files(under folders: [String], tests: Bool) throws -> [String] {
        var found: [String] = []
        for folder in folders {
            let root = Repository.root.appendingPathComponent(folder)
            let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                // Fixtures are data, not pipelines.
                if url.path.contains("/.build/") || url.path.contains("/fixtures/") || url.pathExtension != "yaml" {
                    continue
                }
                if url.lastPathComponent.hasSuffix(".test.yaml") == tests { found.append(url.path) }
            }
        }
        return found.sorted()
    }

    func testEveryPipelineAndTestFileOfTheRepositoryIsValidAndWrongFilesAreRefused() throws {
        let plugin = Repository.root.appendingPathComponent(
            "Examples/TextPlugin/.build/debug/libTextPlugin.so"
        ).path
        try XCTSkipUnless(
            FileManager.default.fileExists(atPath: plugin), "the plugin example's components (make test builds it)")
        let pipelineSchema = directory.appendingPathComponent("rivulet.schema.json").path
        let testSchema = directory.appendingPathComponent("rivulet-test.schema.json").path
        let written = try runRivulet(["schema", "--plugin", plugin])
        XCTAssertEqual(written.status, 0, written.stderr)
        XCTAssertTrue(written.stdout.contains("\"slugify\""), "a loaded plugin's operator is in the schema")
        try written.stdout.write(toFile: pipelineSchema, atomically: true, encoding: .utf8)
        let tests = try runRivulet(["schema", "--tests"])
        XCTAssertEqual(tests.status, 0, tests.stderr)
        try tests.stdout.write(toFile: testSchema, atomically: true, encoding: .utf8)

        let pipelines = try files(under: ["Pipelines", "Examples"], tests: false)
        XCTAssertGreaterThan(pipelines.count, 30)
        let valid = try validate(pipelineSchema, pipelines)
        XCTAssertEqual(valid.status, 0, valid.stdout + valid.stderr)
        let testFiles = try files(under: ["Pipelines", "Examples"], tests: true)
        let validTests = try validate(testSchema, testFiles)
        XCTAssertEqual(validTests.status, 0, validTests.stdout + validTests.stderr)

        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("SchemaCorpus")
        let wrong = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted().map {
            corpus.appendingPathComponent($0).path
        }
        let wrongPipelines = wrong.filter { !$0.hasSuffix(".test.yaml") }
        let wrongTests = wrong.filter { $0.hasSuffix(".test.yaml") }
        XCTAssertGreaterThanOrEqual(wrongPipelines.count, 10)
        let refused = try validate(pipelineSchema, wrongPipelines, invalid: true)
        XCTAssertEqual(refused.status, 0, refused.stdout + refused.stderr)
        // The error names what is wrong, not only that no component matched.
        let misspelt = refused.stdout.split(separator: "\n").first { $0.contains("misspelt-aggregate-parameter") }
        assertContains(
            String(misspelt ?? ""), "refused: ops/0/aggregate: Additional properties are not allowed ('allowedLatness'")
        let unknown = refused.stdout.split(separator: "\n").first { $0.contains("unknown-parameter.yaml") }
        assertContains(String(unknown ?? ""), "'dueTim'")
        let refusedTests = try validate(testSchema, wrongTests, invalid: true)
        XCTAssertEqual(refusedTests.status, 0, refusedTests.stdout + refusedTests.stderr)
        // What the schema refuses, lint refuses too.
        for file in wrong {
            XCTAssertEqual(try runRivulet(["lint", file]).status, 2, file)
        }
    }
}
