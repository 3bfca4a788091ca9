import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet lint` on pipeline files, test files and folders, as a user runs it.
final class LintCommandTests: BinaryTestCase {
    private func write(_ files: [String: String]) throws {
        for (name, text) in files {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
    }

    func testTheReadmeCommandChecksPipelinesAndTheirTestsAsWritten() throws {
        let shell = try ChildProcess(
            executable: "/bin/sh",
            arguments: [
                "-c",
                "cd '\(Repository.root.path)' && '"
                    + productsDirectory().appendingPathComponent("rivulet").path + "' lint Pipelines/*.yaml",
            ])
        let result = shell.communicate(timeout: 120)
        let output = String(decoding: result.standardOutput, as: UTF8.self)
        XCTAssertEqual(result.termination, .exited(0), String(decoding: result.standardError, as: UTF8.self))
        assertContains(output, "Pipelines/carousel.test.yaml: ok\n", "Pipelines/carousel.yaml: ok\n")
    }

    func testAFileWithTwentyThousandMistakesIsToldAllOfThemPromptly() throws {
        // It took 27 s: the registry sorted per unknown name, each suggestion was worked out anew,
        // and the YAML builder copied its list at every item. A 20 s limit (the process is killed
        // past it) is a guard against that, not a measurement.
        let steps = Array(repeating: "  - mapp: .x", count: 20_000).joined(separator: "\n")
        try write(["many.yaml": "source: { events: [] }\nops:\n\(steps)\nsink: stdout\n"])
        let lint = try runRivulet(["lint", directory.appendingPathComponent("many.yaml").path], timeout: 20)
        XCTAssertEqual(lint.status, 2, String(lint.stderr.suffix(300)))
        XCTAssertTrue(
            lint.stderr.contains("many.yaml:3:5: error: unknown operator 'mapp'; did you mean 'map'?"),
            String(lint.stderr.prefix(300)))
        XCTAssertTrue(lint.stderr.hasSuffix("20000 errors in 1 file\n"), String(lint.stderr.suffix(200)))
    }

    func testAReduceHoldingADurableSourcesMessagesIsAWarningWithoutState() throws {
        try write([
            "total.yaml": """
            source: { nats: { url: "nats://127.0.0.1:4222", stream: ORDERS, subject: "orders.>", durable: total } }
            ops:
              - filter: . != null
              - reduce: { seed: 0, accumulator: acc + 1 }
            sink: stdout
            """
        ])
        let file = directory.appendingPathComponent("total.yaml").path
        let plain = try runRivulet(["lint", file])
        XCTAssertEqual(plain.status, 0, "a warning, not an error: " + plain.stderr)
        assertContains(
            plain.stderr, "total.yaml:4:5: warning: 'reduce' holds every message it takes unacknowledged",
            "run with --state")
        let keeping = try runRivulet(["lint", "--state", file])
        XCTAssertEqual(keeping.status, 0, keeping.stderr)
        XCTAssertFalse(keeping.stderr.contains("warning"), "each checkpoint acknowledges: " + keeping.stderr)
    }

    func testLintRefusesWhatRunRefusesAPartitionByOtherThanTheGroups() throws {
        // lint --state said ok; run --state refused it only once built. Without --state too the
        // partitions are the group's (each chain a watermark from its own partition's messages).
        try write([
            "group.yaml": """
            source: { nats: { url: "nats://127.0.0.1:1", stream: EVENTS, subject: events, group: g, partitions: 8 } }
            ops:
              - partitionBy: { key: .key, partitions: 16, ops: [{ map: . }] }
            sink: stdout
            """,
            "default.yaml": """
            source: { nats: { url: "nats://127.0.0.1:1", stream: EVENTS, subject: events, group: g, partitions: 8 } }
            ops:
              - partitionBy: { key: .key, ops: [{ map: . }] }
            sink: stdout
            """,
            "same.yaml": """
            source: { nats: { url: "nats://127.0.0.1:1", stream: EVENTS, subject: events, group: g, partitions: 8 } }
            ops:
              - partitionBy: { key: .key, partitions: 8, ops: [{ map: . }] }
            sink: stdout
            """,
        ])
        let path = { (name: String) in self.directory.appendingPathComponent(name).path }
        let message = "error: after the nats source of group g each partition is the group's: "
        let written = try runRivulet(["lint", "--state", path("group.yaml")])
        XCTAssertEqual(written.status, 2, written.stderr)
        assertContains(written.stderr, "group.yaml:3:43: " + message + "partitions must be 8 (the source's), not 16")
        let byDefault = try runRivulet(["lint", "--state", path("default.yaml")])
        XCTAssertEqual(byDefault.status, 2, byDefault.stderr)
        assertContains(byDefault.stderr, "default.yaml:3:5: " + message + "partitions must be 8 (the source's), not 16")
        XCTAssertEqual(try runRivulet(["lint", "--state", path("same.yaml")]).status, 0)
        let withoutState = try runRivulet(["lint", path("group.yaml")])
        XCTAssertEqual(withoutState.status, 2, withoutState.stderr)
        assertContains(
            withoutState.stderr, "group.yaml:3:43: " + message + "partitions must be 8 (the source's), not 16")
        XCTAssertEqual(try runRivulet(["lint", path("same.yaml")]).status, 0)
        let run = try runRivulet(["run", "--state", path("s.db"), path("group.yaml")])
        XCTAssertEqual(run.status, 2, run.stderr)
        assertContains(run.stderr, "group.yaml:3:43: " + message)
    }

    /// `lint --set` checks what `run --set` would run: the file with the values overridden,
    /// each error told as run tells it.
    func testSetChecksTheFileWithTheValuesOverriddenAsRunDoes() throws {
        try write(["set.yaml": "source: { interval: 1s }\nops: [{ take: 1 }, { debounce: 1s }]\nsink: stdout\n"])
        let file = directory.appendingPathComponent("set.yaml").path
        let fine = try runRivulet(["lint", "--set", "ops.1.debounce=300ms", file])
        XCTAssertEqual(fine.status, 0, fine.stderr)
        assertContains(fine.stdout, "set.yaml: ok")
        for (override, message) in [
            ("ops.1.debounce=99999999999h", "the longest is 100000h"),
            ("source.intervall=100ms", "found 'interval' and 'intervall'"),
            ("ops.3.map=1", "'3' is not an index of this list (0 to 1)"),
        ] {
            let linted = try runRivulet(["lint", "--set", override, file])
            let ran = try runRivulet(["run", "--set", override, file])
            XCTAssertEqual(linted.status, 2, override)
            XCTAssertEqual(ran.status, 2, override)
            assertContains(linted.stderr, message)
            assertContains(ran.stderr, message)
        }
        let malformed = try runRivulet(["lint", "--set", "nonsense", file])
        XCTAssertEqual(malformed.status, 2)
        assertContains(malformed.stderr, "--set expects key=value")
    }

    func testATestFileIsCheckedWithoutRunningItsErrorsLocatedInTheFileTheyAreIn() throws {
        try write([
            "p.yaml":
                "source: { events: [{ at: 0ms, next: 1 }] }\nops:\n  - id: lookup\n    map: . * 10\nsink: stdout\n",
            "good.test.yaml": "pipeline: p.yaml\ntests:\n  - name: ten\n    expect: [{ at: 0ms, next: 10 }]\n",
            "bad.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: wrong input
                inputs: { nope: [] }
                expectCount: 1
              - name: wrong stream
                stream: lookupp
                expectCount: 1
              - name: broken input
                inputs: { source: { marbles: "a(b|" } }
                expectCount: 1
            """,
        ])
        let good = try runRivulet(["lint", directory.appendingPathComponent("good.test.yaml").path])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdout.hasSuffix("good.test.yaml: ok\n"), good.stdout)
        let bad = try runRivulet(["lint", directory.appendingPathComponent("bad.test.yaml").path])
        XCTAssertEqual(bad.status, 2)
        assertContains(
            bad.stderr, "bad.test.yaml:4:21: error: the pipeline has one stream; name its input 'source'",
            "bad.test.yaml:7:13: error: unknown stream 'lookupp'", "'(' without ')'")
        XCTAssertTrue(bad.stderr.hasSuffix("3 errors in 1 file\n"), bad.stderr)
    }

    func testATestFilesMisspeltKeysAndItsWrongInputsAreToldAtOnce() throws {
        try write([
            "p.yaml": "source: { events: [{ at: 0ms, next: 1 }] }\nsink: stdout\n",
            "p.test.yaml": """
            pipeline: p.yaml
            tests:
              - name: one
                inputs:
                  sourc:
                    - { at: 0ms, next: 1 }
                expect:
                  - { at: 0ms, nxt: 1 }
              - name: two
                inputs:
                  source:
                    - { at: 0ms, nex: 1 }
                expet:
                  - { at: 0ms, complete: true }
            """,
        ])
        let lint = try runRivulet(["lint", directory.appendingPathComponent("p.test.yaml").path])
        XCTAssertEqual(lint.status, 2)
        // Before, the second line of errors came only once the first was mended.
        assertContains(
            lint.stderr,
            "p.test.yaml:8:9: error: an expected event needs next, error or complete; did you mean 'next'?",
            "p.test.yaml:13:5: error: unknown key 'expet' in a test; did you mean 'expect'?",
            "p.test.yaml:6:9: error: the pipeline has one stream; name its input 'source'",
            "p.test.yaml:12:11: error: events: timeline entry 1: unknown key 'nex'")
        XCTAssertTrue(lint.stderr.hasSuffix("5 errors in 1 file\n"), lint.stderr)
        let run = try runRivulet(["test", directory.appendingPathComponent("p.test.yaml").path])
        XCTAssertEqual(run.status, 2, "the file is not run")
    }

    func testAFolderIsSearchedForPipelinesAndTestsAndOtherYAMLIsLeftAlone() throws {
        try write([
            "a/p.yaml": "source: { events: [{ at: 0ms, next: 1 }] }\nsink: stdout\n",
            "a/p.test.yaml": "pipeline: p.yaml\ntests:\n  - expectCount: 1\n",
            "a/fixtures/timeline.yaml": "- { at: 0ms, next: 1 }\n",
            "a/.hidden/broken.yaml": "source: { nope: 1 }\nsink: stdout\n",
            "b/q.yml": "source: { fixtur: x }\nsink: stdout\n",
        ])
        let result = try runRivulet(["lint", directory.appendingPathComponent("a").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            result.stdout.split(separator: "\n").map { $0.split(separator: "/").suffix(2).joined(separator: "/") },
            ["a/p.test.yaml: ok", "a/p.yaml: ok"])
        let failing = try runRivulet(["lint", directory.path])
        XCTAssertEqual(failing.status, 2)
        assertContains(failing.stderr, "b/q.yml:1:11: error: unknown source 'fixtur'")
        let empty = try runRivulet(["lint", directory.appendingPathComponent("a/fixtures").path])
        XCTAssertEqual(empty.status, 2)
        XCTAssertTrue(empty.stderr.hasPrefix("error: no pipeline or test file in"), empty.stderr)
    }

    func testJSONAndJUnitReportsForCI() throws {
        try write([
            "good.yaml": "source: { events: [{ at: 0ms, next: 1 }] }\nsink: stdout\n",
            "bad.yaml": "source: { fixtur: x }\nsink: stdout\n",
        ])
        let json = try runRivulet(["lint", directory.path, "--format", "json"])
        XCTAssertEqual(json.status, 2)
        XCTAssertEqual(json.stderr, "", "the report is on standard output only")
        let document = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        XCTAssertEqual(document["errors"] as? Int, 1)
        let files = try XCTUnwrap(document["files"] as? [[String: Any]])
        XCTAssertEqual(files.map { $0["ok"] as? Bool }, [false, true])
        let diagnostic = try XCTUnwrap((files[0]["diagnostics"] as? [[String: Any]])?.first)
        XCTAssertEqual(diagnostic["line"] as? Int, 1)
        XCTAssertEqual(diagnostic["column"] as? Int, 11)
        XCTAssertEqual(diagnostic["severity"] as? String, "error")
        XCTAssertTrue((diagnostic["message"] as? String ?? "").hasPrefix("unknown source 'fixtur'"))

        let junit = try runRivulet(["lint", directory.path, "--format", "junit"])
        XCTAssertEqual(junit.status, 2)
        assertContains(junit.stdout, "tests=\"2\" failures=\"1\"", "bad.yaml:1:11: error: unknown source")
    }

    func testAParameterWrittenBesideAComponentsShortFormIsShownHowToWriteIt() throws {
        try write([
            "sink.yaml": "source: { events: [{ at: 0ms, next: 1 }] }\nsink: { file: \"out.csv\", mode: append }\n",
            "ops.yaml": "source: { events: [{ at: 0ms, next: 1 }] }\nops:\n  - map: .x\n    take: 3\nsink: stdout\n",
        ])
        let sink = try runRivulet(["lint", directory.appendingPathComponent("sink.yaml").path])
        XCTAssertEqual(sink.status, 2)
        assertContains(
            sink.stderr, "sink.yaml:2:26: error: one sink per item: found 'file' and 'mode'",
            "note: 'mode' is a parameter of file: write them together, file: { path: \"out.csv\", mode: append }")
        // Not a parameter: two operators in one item, as before.
        let ops = try runRivulet(["lint", directory.appendingPathComponent("ops.yaml").path])
        XCTAssertEqual(ops.status, 2)
        assertContains(
            ops.stderr, "ops.yaml:4:5: error: one operator per item: found 'map' and 'take'",
            "note: start each operator on its own line with '- '")
    }

    func testACommaThatCutsAnExpressionInsideBracesIsSaidToDoSo() throws {
        try write([
            "flow.yaml": "source: { events: [{ at: 0ms, next: 1 }] }\nops: [{ map: max(., 2) }]\nsink: stdout\n",
            "mapping.yaml":
                "source: { events: [{ at: 0ms, next: 1 }] }\nops:\n  - map: { top: max(., 2) }\nsink: stdout\n",
            "block.yaml": "source: { events: [{ at: 0ms, next: 1 }] }\nops:\n  - map: max(., 2)\nsink: stdout\n",
        ])
        for file in ["flow.yaml", "mapping.yaml"] {
            let result = try runRivulet(["lint", directory.appendingPathComponent(file).path])
            XCTAssertEqual(result.status, 2, file)
            XCTAssertTrue(
                result.stderr.contains(
                    "note: inside { } and [ ] a comma ends a value: quote an expression that contains commas"),
                "\(file): \(result.stderr)")
        }
        XCTAssertEqual(try runRivulet(["lint", directory.appendingPathComponent("block.yaml").path]).status, 0)
    }
}
