import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet graph` and `rivulet components`, run as a user would, compared with reviewed output.
final class DescribeCommandTests: XCTestCase {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    private func golden(_ name: String) throws -> String {
        try String(contentsOf: Self.golden.appendingPathComponent(name), encoding: .utf8)
    }

    func testGraphInEveryFormat() throws {
        for pipeline in ["carousel", "search-as-you-type"] {
            for format in ["text", "dot", "mermaid"] {
                let path = Repository.root.appendingPathComponent("Pipelines/\(pipeline).yaml").path
                let result = try runRivulet(["graph", path, "--format", format])
                XCTAssertEqual(result.status, 0, result.stderr)
                XCTAssertEqual(result.stdout, try golden("\(pipeline).\(format)"), "\(pipeline) as \(format)")
            }
        }
    }

    func testGraphOfAnInvalidFileReportsItsErrors() throws {
        let path = Repository.root.appendingPathComponent("Tests/RivuletCLITests/LintCorpus/01-misspelt-operator.yaml")
            .path
        let result = try runRivulet(["graph", path])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("unknown operator 'debounse'; did you mean 'debounce'?"))
        let badFormat = try runRivulet(["graph", path, "--format", "svg"])
        XCTAssertEqual(badFormat.status, 2)
    }

    func testComponentsListAndDetail() throws {
        let list = try runRivulet(["components"])
        XCTAssertEqual(list.status, 0)
        XCTAssertEqual(list.stdout, try golden("components.txt"))
        let detail = try runRivulet(["components", "flatMapLatest"])
        XCTAssertEqual(detail.status, 0)
        XCTAssertEqual(detail.stdout, try golden("components-flatMapLatest.txt"))
        let http = try runRivulet(["components", "http"])
        XCTAssertTrue(
            http.stdout.contains(
                "  retry.max (integer), default 5\n      Attempts in all, the first included (as the retry operator counts)"
            ),
            "nested parameters are listed: \(http.stdout)")
        let json = try runRivulet(["components", "http", "--format", "json"])
        XCTAssertEqual(json.status, 0)
        let described = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], json.stdout)
        XCTAssertEqual(described.first?["kind"] as? String, "source")
        let parameters = try XCTUnwrap(described.first?["parameters"] as? [[String: Any]])
        let retryMax = try XCTUnwrap(parameters.first { $0["name"] as? String == "retry.max" })
        XCTAssertEqual(retryMax["default"] as? Int, 5)
        let all = try runRivulet(["components", "--format", "json"])
        XCTAssertEqual(
            (try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [Any])?.count,
            list.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }.count, "one object per component listed")
        let unknown = try runRivulet(["components", "flatmaplatest"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.stderr, "error: no component 'flatmaplatest'; did you mean 'flatMapLatest'?\n")
    }

    func testReferenceDocsAreUpToDate() throws {
        let result = try runRivulet(["components", "--format", "markdown"])
        XCTAssertEqual(result.status, 0)
        let committed = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/components.md"), encoding: .utf8)
        XCTAssertEqual(result.stdout, committed, "docs/components.md is stale: run 'make docs'")
    }

    func testEveryExamplePipelineLintsClean() throws {
        let directory = Repository.root.appendingPathComponent("Pipelines")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".yaml") && !$0.hasSuffix(".test.yaml")
        }
        XCTAssertFalse(files.isEmpty)
        let result = try runRivulet(["lint"] + files.map { directory.appendingPathComponent($0).path })
        XCTAssertEqual(result.status, 0, result.stderr)
    }
}
