import Foundation
import XCTest

/// `rivulet test`, run as a user runs it.
final class TestCommandTests: XCTestCase {
    private func directory(_ files: [String: String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in files {
            try text.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    static let pipeline =
        "source: { events: [{ at: 0ms, next: 1 }] }\nops:\n  - map: . * 10\n  - delay: 100ms\nsink: stdout\n"

    func testPassingAndFailingCasesWithADiffAndTheSummaryLine() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: times ten, later
                inputs: { source: { marbles: "ab|", tick: 50ms, values: { a: 1, b: 2 } } }
                expect:
                  - { at: 100ms, next: 10 }
                  - { at: 150ms, next: 20 }
                  - { at: 200ms, complete: true }
              - name: a wrong expectation
                inputs: { source: [{ at: 0ms, next: 3 }, { at: 0ms, complete: true }] }
                expect:
                  - { at: 90ms, next: 30 }
                  - { at: 100ms, complete: true }
            """,
        ])
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stdout.contains("ok    \(url.path)/p.test.yaml: times ten, later"), result.stdout)
        XCTAssertTrue(result.stdout.contains("FAIL  \(url.path)/p.test.yaml: a wrong expectation"), result.stdout)
        XCTAssertTrue(result.stdout.contains("- 90ms next 30\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("+ 100ms next 30\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("    100ms complete\n"), result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix("1 passed, 1 failed\n"), result.stdout)
    }

    func testAnInvalidTestFileExitsTwoWithLocatedErrors() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "bad.test.yaml": "pipeline: p.yaml\ntests:\n  - name: no expectation\n    inputz: {}\n",
        ])
        let result = try runRivulet(["test", url.appendingPathComponent("bad.test.yaml").path])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(
            result.stderr.contains("bad.test.yaml:4:5: error: unknown key 'inputz' in a test; did you mean 'inputs'?"),
            result.stderr)
        XCTAssertTrue(
            result.stderr.contains("bad.test.yaml:3:5: error: test 'no expectation' has no expectation"), result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("0 passed, 0 failed\n"))
    }

    func testSelectChecksPartOfEachElementAndABadOneIsAnError() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "ok.test.yaml":
                "pipeline: p.yaml\ntests:\n  - name: tens\n    select: \"{tens: . / 10}\"\n    expect: [{ at: 100ms, next: { tens: 1 } }]\n",
            "wrong.test.yaml":
                "pipeline: p.yaml\ntests:\n  - name: len of a number\n    select: len(.)\n    expectCount: 1\n",
            "bad.test.yaml": "pipeline: p.yaml\ntests:\n  - name: syntax\n    select: \"len(\"\n    expectCount: 1\n",
        ])
        let passed = try runRivulet(["test", url.appendingPathComponent("ok.test.yaml").path])
        XCTAssertEqual(passed.status, 0, passed.stdout)
        let failed = try runRivulet(["test", url.appendingPathComponent("wrong.test.yaml").path])
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stdout.contains("select 'len(.)' on 10:"), failed.stdout)
        let invalid = try runRivulet(["test", url.appendingPathComponent("bad.test.yaml").path])
        XCTAssertEqual(invalid.status, 2)
        XCTAssertTrue(invalid.stderr.contains("bad.test.yaml:4:13: error: select:"), invalid.stderr)
    }

    func testAnInputThatBreaksThePipelineFailsTheCaseWithTheDiagnostic() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "p.test.yaml":
                "pipeline: p.yaml\ntests:\n  - name: bad input\n    inputs: { source: { marbles: \"a(b|\" } }\n    expectCount: 1\n",
        ])
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stdout.contains("'(' without ')'"), result.stdout)
    }

    func testAStreamThatNoSinkReadsCanBeChecked() throws {
        let url = try directory([
            "p.yaml": """
            source: { events: [{ at: 0ms, next: 1 }, { at: 10ms, next: 0 }, { at: 20ms, next: 2 }] }
            ops:
              - id: lookup
                flatMap: { source: { events: { timeline: '{{ . == 0 ? [{at: "0ms", error: "zero"}] : [{at: "0ms", next: .}, {at: "0ms", complete: true}] }}' } }, onError: skip }
            sink: stdout
            """,
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: the errors side stream
                stream: lookup.errors
                select: .element
                expect: [{ at: 10ms, next: 0 }]
              - name: the output still
                expect: [{ at: 0ms, next: 1 }, { at: 20ms, next: 2 }]
            """,
        ])
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("2 passed, 0 failed\n"), result.stdout)
    }

    func testThePipelinesOfTheRepositoryPass() throws {
        let result = try runRivulet(["test", DescribeCommandTests.repository.appendingPathComponent("Pipelines").path])
        XCTAssertEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix(" passed, 0 failed\n"))
    }
}
