import BinaryTestSupport
import Foundation
import RivuletTestSupport
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

    /// Runs `rivulet test` on the folder `url` and checks its exit status, which cases of
    /// `p.test.yaml` passed and failed, and texts the report shows; returns the report.
    @discardableResult
    private func runTests(
        in url: URL, status: Int32, passed: [String] = [], failed: [String] = [], showing texts: [String] = [],
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> String {
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, status, result.stdout + result.stderr, file: file, line: line)
        let lines =
            passed.map { "ok    \(url.path)/p.test.yaml: \($0)" }
            + failed.map { "FAIL  \(url.path)/p.test.yaml: \($0)" }
        for text in lines + texts {
            XCTAssertTrue(result.stdout.contains(text), "\(text) in:\n\(result.stdout)", file: file, line: line)
        }
        return result.stdout
    }

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
        // What was expected first, then what came instead.
        let report = try runTests(
            in: url, status: 1, passed: ["times ten, later"], failed: ["a wrong expectation"],
            showing: ["  - 90ms next 30\n        + 100ms next 30\n", "    100ms complete\n"])
        XCTAssertTrue(report.hasSuffix("1 passed, 1 failed\n"), report)
    }

    func testAFileThatCannotRunIsCountedInTheSummaryAndAnUnbuiltPluginSaysHowToBuildIt() throws {
        let url = try directory([
            "good.yaml": Self.pipeline,
            "good.test.yaml": "pipeline: good.yaml\ntests:\n  - name: one\n    expectCount: 1\n",
            "plugged.yaml":
                "plugins: [Words/.build/debug/libWords.so]\nsource: { events: [{ at: 0ms, next: a }] }\nops: [wordCount]\nsink: stdout\n",
            "plugged.test.yaml": "pipeline: plugged.yaml\ntests:\n  - name: words\n    expectCount: 1\n",
        ])
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, 2, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("1 passed, 0 failed, 1 file not run (errors above)\n"), result.stdout)
        assertContains(
            result.stderr, "; build it first: swift build --package-path \(url.path)/Words",
            "note: the plugin that was not found may have it")
    }

    /// A test file that is not there is told as `run` and `lint` tell a pipeline that is not:
    /// located, without the usage of another command.
    func testATestFileThatIsNotThereIsALocatedError() throws {
        let url = try directory([:])
        let missing = url.appendingPathComponent("gone.test.yaml").path
        let result = try runRivulet(["test", missing])
        XCTAssertEqual(result.status, 2, result.stdout + result.stderr)
        assertContains(result.stderr, "\(missing):1:1: error: cannot read the file: No such file or directory")
        XCTAssertFalse(result.stderr.contains("Usage:"), result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("0 passed, 0 failed, 1 file not run (errors above)\n"), result.stdout)
    }

    func testASourceEveryCaseReplacesNeedNotExist() throws {
        let pipeline = "source: { file: { path: \"logs/*.log\" } }\nsink: stdout\n"
        let replaced = "    inputs: { source: [{ at: 0ms, next: a }, { at: 1ms, complete: true }] }\n"
        let expect = "    expect: [{ at: 0ms, next: a }, { at: 1ms, complete: true }]\n"
        let url = try directory([
            "p.yaml": pipeline,
            "p.test.yaml": "pipeline: p.yaml\ntests:\n  - name: one\n" + replaced + expect + "  - name: two\n"
                + replaced + expect,
            "q.yaml": pipeline,
            "q.test.yaml": "pipeline: q.yaml\ntests:\n  - name: one\n" + replaced + expect
                + "  - name: reads the folder\n    expectCount: 1\n",
        ])
        let every = try runRivulet(["test", url.appendingPathComponent("p.test.yaml").path])
        XCTAssertEqual(every.status, 0, every.stdout + every.stderr)
        XCTAssertTrue(every.stdout.hasSuffix("2 passed, 0 failed\n"), every.stdout)
        let notEvery = try runRivulet(["test", url.appendingPathComponent("q.test.yaml").path])
        XCTAssertEqual(notEvery.status, 2, notEvery.stdout + notEvery.stderr)
        assertContains(notEvery.stderr, "/logs' of 'logs/*.log'")
    }

    func testWithinAllowsJitteredTimesAndAnExpectCountFailureShowsTheElements() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: near enough for the case
                within: 15ms
                inputs: { source: [{ at: 0ms, next: 3 }, { at: 0ms, complete: true }] }
                expect: [{ at: 90ms, next: 30 }, { at: 110ms, complete: true }]
              - name: near enough for one entry
                inputs: { source: [{ at: 0ms, next: 3 }, { at: 0ms, complete: true }] }
                expect: [{ at: 95ms, within: 5ms, next: 30 }, { at: 100ms, complete: true }]
              - name: too far for its entry
                within: 50ms
                inputs: { source: [{ at: 0ms, next: 3 }, { at: 0ms, complete: true }] }
                expect: [{ at: 95ms, within: 1ms, next: 30 }, { at: 100ms, complete: true }]
              - name: a count that is wrong
                inputs: { source: [{ at: 0ms, next: 3 }, { at: 5ms, next: 4 }, { at: 5ms, complete: true }] }
                expectCount: 3
              - name: a bad tolerance
                within: soon
                expectCount: 1
            """,
        ])
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, 2, result.stdout + result.stderr)
        assertContains(result.stderr, "'within' must be a duration such as 10ms")
        let url2 = url.appendingPathComponent("p.test.yaml")
        var text = try String(contentsOf: url2, encoding: .utf8)
        text = String(text[..<text.range(of: "  - name: a bad tolerance")!.lowerBound])
        try text.write(to: url2, atomically: true, encoding: .utf8)
        try runTests(
            in: url, status: 1, passed: ["near enough for the case", "near enough for one entry"],
            failed: ["too far for its entry"],
            showing: ["expected 3 elements, got 2\n          100ms next 30\n          105ms next 40\n"])
    }

    func testStartAtSetsTheDateOfTheVirtualClockAndABadOneIsALocatedError() throws {
        let url = try directory([
            "p.yaml": "source: { events: [{ at: 1500ms, next: 1 }] }\nops:\n  - map: formatTime(now())\nsink: stdout\n",
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: a date
                startAt: 2026-11-25T10:00:00+01:00
                expect:
                  - { at: 1500ms, next: "2026-11-25T09:00:01.500Z" }
              - name: the epoch by default
                expect:
                  - { at: 1500ms, next: "1970-01-01T00:00:01.500Z" }
            """,
            "bad.test.yaml": "pipeline: p.yaml\ntests:\n  - name: x\n    startAt: yesterday\n    expect: []\n",
        ])
        let result = try runRivulet(["test", url.appendingPathComponent("p.test.yaml").path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("2 passed, 0 failed\n"), result.stdout)
        let bad = try runRivulet(["test", url.appendingPathComponent("bad.test.yaml").path])
        XCTAssertEqual(bad.status, 2)
        assertContains(
            bad.stderr, "bad.test.yaml:4:14: error: 'startAt' must be a time in RFC 3339, such as 2026-11-25T10:00:00Z")
    }

    func testExpectRequestsSeesWhatWasSentAndWhatTheSwitchCancelled() throws {
        let pipeline = """
            source: { events: [{ at: 0ms, next: a }, { at: 100ms, next: b }, { at: 1s, complete: true }] }
            ops:
              - flatMapLatest:
                  http: { url: "http://127.0.0.1:9/items/{{ . }}", query: { q: "{{ . }}" }, maxPages: 1 }
            sink: stdout
            """
        let http = """
                http:
                  - request: { path: /items/a }
                    response: { status: 200, body: "[1]", delay: 300ms }
                  - request: { path: /items/b }
                    response: { status: 200, body: "[2]", delay: 50ms }
            """
        let url = try directory([
            "p.yaml": pipeline,
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: right
            \(http)
                expectRequests:
                  - { at: 0ms, path: /items/a, query: { q: a }, cancelled: 100ms }
                  - { at: 100ms, method: get, path: "/items/b?q=b", answered: 150ms }
              - name: the cancellation unsaid
            \(http)
                expectRequests:
                  - { at: 0ms, path: /items/a }
                  - { at: 100ms, path: /items/b }
            """,
        ])
        try runTests(
            in: url, status: 1, passed: ["right"], failed: ["the cancellation unsaid"],
            showing: [
                "    0ms GET /items/a?q=a cancelled 100ms\n", "    100ms GET /items/b?q=b answered 150ms (200)\n",
            ])
    }

    func testQueryExactRefusesAParameterTheExpectationDoesNotName() throws {
        let url = try directory([
            "p.yaml": """
            source: { events: [{ at: 0ms, next: a }, { at: 1s, complete: true }] }
            ops:
              - flatMap: { http: { url: "http://127.0.0.1:9/items", query: { q: "{{ . }}", per_page: "3" }, maxPages: 1 } }
            sink: stdout
            """,
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: some of them
                http: [{ request: { path: /items }, response: { status: 200, body: "[1]" } }]
                expectRequests: [{ at: 0ms, path: /items, query: { q: a } }]
              - name: all of them
                http: [{ request: { path: /items }, response: { status: 200, body: "[1]" } }]
                expectRequests: [{ at: 0ms, path: /items, query: { q: a, per_page: "3" }, queryExact: true }]
              - name: not all of them
                http: [{ request: { path: /items }, response: { status: 200, body: "[1]" } }]
                expectRequests: [{ at: 0ms, path: /items, query: { q: a }, queryExact: true }]
            """,
        ])
        try runTests(
            in: url, status: 1, passed: ["some of them", "all of them"], failed: ["not all of them"],
            showing: ["    0ms GET /items?q=a (exactly)\n"])
    }

    func testAnHTTPSinksRequestsAreAnsweredFromTheTestAndAsserted() throws {
        let url = try directory([
            "p.yaml": """
            source: { events: [{ at: 0ms, next: { id: 1 } }, { at: 10ms, next: { id: 2 } }, { at: 20ms, complete: true }] }
            sink: { http: { url: "https://hooks.example.com/orders/{{ .id }}?src=rivulet", retry: { backoff: 100ms } } }
            """,
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: each order is posted, a 503 tried again
                http:
                  - { request: { method: POST, path: /orders/1 }, response: { status: 200, delay: 5ms } }
                  - { request: { method: POST, path: /orders/2 }, response: { status: 503, delay: 5ms } }
                  - { request: { method: POST, path: /orders/2 }, response: { status: 201, delay: 5ms } }
                expect: [{ at: 0ms, next: { id: 1 } }, { at: 10ms, next: { id: 2 } }, { at: 20ms, complete: true }]
                expectRequests:
                  - { at: 0ms, method: POST, path: /orders/1, query: { src: rivulet }, queryExact: true, body: { id: 1 }, answered: 5ms }
                  - { at: 10ms, method: POST, path: /orders/2, body: { id: 2 }, answered: 15ms }
                  - { at: 93.328ms, method: POST, path: /orders/2, body: { id: 2 }, answered: 98.328ms }
              - name: a body that differs
                http:
                  - { request: { method: POST, path: /orders/1 }, response: { status: 200 } }
                  - { request: { method: POST, path: /orders/2 }, response: { status: 200 } }
                expect: [{ at: 0ms, next: { id: 1 } }, { at: 10ms, next: { id: 2 } }, { at: 20ms, complete: true }]
                expectRequests:
                  - { at: 0ms, method: POST, path: /orders/1, body: { id: 1 } }
                  - { at: 10ms, method: POST, path: /orders/2, body: { id: 3 } }
              - name: a request the test does not answer fails the run
                http: [{ request: { method: POST, path: /orders/1 }, response: { status: 200 } }]
                expect: [{ at: 0ms, next: { id: 1 } }, { at: 10ms, next: { id: 2 } }, { at: 20ms, complete: true }]
            """,
        ])
        try runTests(
            in: url, status: 1, passed: ["each order is posted, a 503 tried again"],
            failed: ["a body that differs", "a request the test does not answer fails the run"],
            showing: [
                "    10ms POST /orders/2 body {\"id\":3}\n",
                "10ms POST /orders/2?src=rivulet body {\"id\":2} answered 10ms (200)",
                "has no answer for POST /orders/2?src=rivulet",
            ])
    }

    func testAnExpectedRequestWithAnUnknownKeyIsALocatedError() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: x
                expectRequests:
                  - { at: 0ms, path: /a, canceled: 1s }
                  - { at: soon, path: /b }
                  - { at: 1s }
            """,
        ])
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, 2)
        assertContains(
            result.stderr,
            "p.test.yaml:5:30: error: unknown key 'canceled' in an expected request; did you mean 'cancelled'?",
            "p.test.yaml:6:15: error: 'at' must be a time such as 320ms",
            "p.test.yaml:7:9: error: an expected request needs 'at' (when it is sent) and 'path'")
    }

    func testAnInvalidTestFileExitsTwoWithLocatedErrors() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "bad.test.yaml": "pipeline: p.yaml\ntests:\n  - name: no expectation\n    inputz: {}\n",
        ])
        let result = try runRivulet(["test", url.appendingPathComponent("bad.test.yaml").path])
        XCTAssertEqual(result.status, 2)
        assertContains(
            result.stderr, "bad.test.yaml:4:5: error: unknown key 'inputz' in a test; did you mean 'inputs'?",
            "bad.test.yaml:3:5: error: test 'no expectation' has no expectation")
        XCTAssertTrue(result.stdout.hasSuffix("0 passed, 0 failed, 1 file not run (errors above)\n"), result.stdout)
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
        assertContains(failed.stdout, "select 'len(.)' on 10:")
        let invalid = try runRivulet(["test", url.appendingPathComponent("bad.test.yaml").path])
        XCTAssertEqual(invalid.status, 2)
        assertContains(invalid.stderr, "bad.test.yaml:4:13: error: select:")
    }

    func testAnInputThatBreaksThePipelineFailsTheCaseWithTheDiagnostic() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "p.test.yaml":
                "pipeline: p.yaml\ntests:\n  - name: bad input\n    inputs: { source: { marbles: \"a(b|\" } }\n    expectCount: 1\n",
        ])
        let result = try runRivulet(["test", url.path])
        XCTAssertEqual(result.status, 1)
        assertContains(result.stdout, "'(' without ')'")
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

    func testUpdateRewritesTheExpectationsOfFailedCasesAndKeepsTheRestOfTheFile() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "p.test.yaml": """
            # kept
            pipeline: p.yaml
            tests:
              - name: flow
                expect: [{ at: 0ms, next: 1 }]   # kept too
              - name: block
                expect:
                  - at: 1ms
                    next: 3
              - name: right
                expect: [{ at: 100ms, next: 10 }]
              - name: count
                expectCount: 5
            """,
        ])
        let update = try runRivulet(["test", url.path, "--update"])
        XCTAssertEqual(update.status, 1, "the count case cannot be updated and still fails")
        assertContains(update.stdout, "UPDATE ")
        XCTAssertTrue(update.stdout.contains("+ 100ms next 10"), "the diff is shown first: \(update.stdout)")
        XCTAssertTrue(update.stdout.hasSuffix("1 passed, 1 failed, 2 updated\n"), update.stdout)
        let text = try String(contentsOf: url.appendingPathComponent("p.test.yaml"), encoding: .utf8)
        XCTAssertEqual(
            text,
            """
            # kept
            pipeline: p.yaml
            tests:
              - name: flow
                expect:
                  - { at: 100ms, next: 10 }   # kept too
              - name: block
                expect:
                  - at: 100ms
                    next: 10
              - name: right
                expect: [{ at: 100ms, next: 10 }]
              - name: count
                expectCount: 5
            """)
        let again = try runRivulet(["test", url.path, "--filter", "l"])
        XCTAssertEqual(again.status, 0, again.stdout)
        XCTAssertEqual(
            again.stdout.split(separator: "\n").count, 3, "flow and block ran, and the summary: \(again.stdout)")
    }

    func testJSONAndJUnitReports() throws {
        let url = try directory([
            "p.yaml": Self.pipeline,
            "p.test.yaml":
                "pipeline: p.yaml\ntests:\n  - name: good\n    expectCount: 1\n  - name: bad <one>\n    expectCount: 2\n",
        ])
        let json = try runRivulet(["test", url.path, "--format", "json"])
        XCTAssertEqual(json.status, 1)
        let document = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        XCTAssertEqual(document["passed"] as? Int, 1)
        XCTAssertEqual(document["failed"] as? Int, 1)
        let cases = try XCTUnwrap(((document["files"] as? [[String: Any]])?.first?["cases"]) as? [[String: Any]])
        XCTAssertEqual(cases.map { $0["name"] as? String }, ["good", "bad <one>"])
        XCTAssertEqual(cases[1]["report"] as? String, "expected 2 elements, got 1\n    100ms next 10")

        let junit = try runRivulet(["test", url.path, "--format", "junit"])
        XCTAssertEqual(junit.status, 1)
        XCTAssertTrue(junit.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"), junit.stdout)
        assertContains(
            junit.stdout, "tests=\"2\" failures=\"1\"",
            "name=\"bad &lt;one&gt;\">\n      <failure message=\"expected 2 elements, got 1\">")
    }

    func testTheEverydayExamplesPassAndLintClean() throws {
        let examples = Repository.root.appendingPathComponent("Examples")
        let plugin = examples.appendingPathComponent("TextPlugin/.build/debug/libTextPlugin.so").path
        try XCTSkipUnless(
            FileManager.default.fileExists(atPath: plugin), "word-counts needs the TextPlugin example built (make test)"
        )
        let result = try runRivulet(["test", examples.appendingPathComponent("Everyday").path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix(" passed, 0 failed\n"), result.stdout)
        let lint = try runRivulet(["lint", examples.path])
        XCTAssertEqual(lint.status, 0, lint.stderr)
    }

    func testThePipelinesOfTheRepositoryPass() throws {
        let result = try runRivulet(["test", Repository.root.appendingPathComponent("Pipelines").path])
        XCTAssertEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix(" passed, 0 failed\n"))
    }
}
