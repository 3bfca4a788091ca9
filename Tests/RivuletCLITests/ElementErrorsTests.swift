import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// `onError: fail | skip | errors` through the binary: a fixture with malformed lines, an
/// expression that fails on some elements, and the `NAME.errors` side stream as a dead-letter file.
final class ElementErrorsTests: BinaryTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try "{\"n\": 1}\nnot json\n{\"n\": 2}\n{\"n\": \n{\"n\": \"three\"}\n".write(
            to: directory.appendingPathComponent("orders.jsonl"), atomically: true, encoding: .utf8)
    }

    private func pipeline(source: String = "", map: String = "") -> String {
        """
        source: { fixture: { path: orders.jsonl\(source) } }
        ops:
          - map: { doubled: .n * 2 }\(map)
        sink: stdout
        """
    }

    func testAMalformedLineFailsTheRunByDefault() throws {
        let result = try run(pipeline())
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stdout, "{\"doubled\":2}\n", "what came before the bad line is written")
        assertContains(result.stderr, "error: fixture: fixture ", "orders.jsonl line 2: ")
    }

    func testAnAccumulatorThatDoublesStopsAtTheValueLimitNotAtTheMachinesMemory() throws {
        // acc + acc reached 6-10 GB in 40 s and ignored SIGTERM.
        let started = Date()
        let result = try run(
            """
            source: { interval: 1ms }
            ops:
              - take: 40
              - scan: { seed: x, accumulator: acc + acc }
              - map: len(.)
            sink: stdout
            """, ["--clock", "virtual"])
        XCTAssertEqual(result.status, 1, result.stderr)
        assertContains(result.stderr, "more than the 64 MiB a value may hold")
        XCTAssertTrue(result.stdout.hasSuffix("\n33554432\n67108864\n"), result.stdout)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20)
    }

    func testSkipDropsAndCountsEachBadElement() throws {
        let result = try run(pipeline(source: ", onError: skip", map: "\n    onError: skip"))
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"doubled\":2}\n{\"doubled\":4}\n")
        assertContains(
            result.stderr,
            ":1:11: warning: fixture skipped 2 elements it could not handle (onError: skip); the first: fixture ",
            ":3:5: warning: map skipped 1 element it could not handle (onError: skip)")
    }

    func testNumberTextOutOfRangeIsSkippedNotACrash() throws {
        // Each of these bodies once killed the run with SIGILL in parseTime, onError: skip or not.
        let lines = ["1e400", "Infinity", "1e19", "9999999999999999999999", "1700000000", "-1e400", "nan"]
        try lines.map { "{\"t\": \"\($0)\"}" }.joined(separator: "\n").write(
            to: directory.appendingPathComponent("times.jsonl"), atomically: true, encoding: .utf8)
        let result = try run(
            """
            source: { file: { path: times.jsonl, format: jsonl } }
            ops:
              - map: { at: "parseTime(.t)", text: "formatTime(parseTime(.t) * 1000000)" }
                onError: skip
            sink: stdout
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "")
        assertContains(result.stderr, "map skipped 7 elements it could not handle (onError: skip)")
        let kept = try run(
            """
            source: { file: { path: times.jsonl, format: jsonl } }
            ops:
              - map: parseTime(.t)
                onError: skip
            sink: stdout
            """)
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertEqual(kept.stdout, "1700000000000\n")
        assertContains(kept.stderr, "map skipped 6 elements", "'1e400' is not a time")
    }

    func testInnerRequestsThatFailUnderSkipAreCountedAsErrors() throws {
        // Nothing listens on port 1: each element's request fails; the summary once said 0 errors.
        let result = try run(
            """
            source: { events: [{ at: 0ms, next: 1 }, { at: 1ms, next: 2 }, { at: 2ms, next: 3 }, { at: 3ms, complete: true }] }
            ops:
              - flatMap:
                  source: { http: { url: "http://127.0.0.1:1/item/{{ . }}", retry: { max: 1 } } }
                  onError: skip
            sink: stdout
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "")
        assertContains(
            result.stderr, ":3:5: warning: flatMap skipped 3 elements it could not handle (onError: skip)",
            "run completed: 3 elements read, 0 written, 3 errors in ")
    }

    func testErrorsGoToTheSideStreamThatASinkReads() throws {
        let text = """
            streams:
              orders:
                source: { fixture: { path: orders.jsonl, onError: errors } }
                ops:
                  - id: double
                    map: { doubled: .n * 2 }
                    onError: errors
              deadLetters:
                source: { stream: orders.errors }
                ops:
                  - merge: [double.errors]
            sinks:
              - { stream: orders, stdout: {} }
              - { stream: deadLetters, file: { path: dead-letters.jsonl } }
            """
        let result = try run(text)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"doubled\":2}\n{\"doubled\":4}\n")
        // Nothing but the summary: 3 read; 2 to stdout and 3 dead letters written.
        XCTAssertTrue(
            result.stderr.hasPrefix("run completed: 3 elements read, 5 written, 0 errors in "), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        let letters = try String(contentsOf: directory.appendingPathComponent("dead-letters.jsonl"), encoding: .utf8)
        let lines = letters.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, letters)
        let reports = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let sourceReports = reports.filter { $0["component"] as? String == "fixture" }
        XCTAssertEqual(sourceReports.map { $0["element"] as? String }, ["not json", "{\"n\": "])
        XCTAssertTrue((sourceReports[0]["error"] as? String ?? "").contains("orders.jsonl line 2: "), "\(reports)")
        XCTAssertTrue((sourceReports[0]["location"] as? String ?? "").hasSuffix(":3:15"), "\(reports)")
        XCTAssertNotNil(sourceReports[0]["at"] as? Int)
        let mapReport = try XCTUnwrap(reports.first { $0["component"] as? String == "map" })
        XCTAssertEqual(mapReport["element"] as? [String: String], ["n": "three"])
        XCTAssertTrue((mapReport["error"] as? String ?? "").contains(".n * 2"), "\(mapReport)")
    }

    func testLintKnowsTheErrorsStreams() throws {
        let misspelled = """
            streams:
              orders:
                source: { fixture: { path: orders.jsonl, onError: errors } }
            sinks:
              - { stream: orders, stdout: {} }
              - { stream: orders.erors, stdout: {} }
            """
        let file = directory.appendingPathComponent("typo.yaml")
        try misspelled.write(to: file, atomically: true, encoding: .utf8)
        let typo = try runRivulet(["lint", file.path])
        XCTAssertEqual(typo.status, 2)
        assertContains(
            typo.stderr, "typo.yaml:6:15: error: stream 'orders' has no side stream 'erors'; did you mean 'errors'?")
        let unrouted = misspelled.replacingOccurrences(of: ", onError: errors", with: "").replacingOccurrences(
            of: "orders.erors", with: "orders.errors")
        try unrouted.write(to: file, atomically: true, encoding: .utf8)
        let quiet = try runRivulet(["lint", file.path])
        XCTAssertEqual(quiet.status, 2)
        assertContains(
            quiet.stderr,
            "typo.yaml:6:15: error: the errors of fixture go to its 'errors' side stream only with onError: errors")
    }

    func testATestFileCanAssertAnErrorsStream() throws {
        try """
        streams:
          orders:
            source: { fixture: { path: orders.jsonl, onError: errors } }
        sinks:
          - { stream: orders, stdout: {} }
        """.write(to: directory.appendingPathComponent("t.yaml"), atomically: true, encoding: .utf8)
        try """
        pipeline: t.yaml
        tests:
          - name: bad lines are reported
            stream: orders.errors
            select: .element
            expect:
              - { at: 0ms, next: "not json" }
              - { at: 0ms, next: "{\\"n\\": " }
              - { at: 0ms, complete: true }
          - name: good lines pass
            stream: orders
            expectCount: 3
        """.write(to: directory.appendingPathComponent("t.test.yaml"), atomically: true, encoding: .utf8)
        let testFile = directory.appendingPathComponent("t.test.yaml")
        let result = try runRivulet(["test", testFile.path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        // Misspelt, it is named at the test file's line, with a suggestion.
        let text = try String(contentsOf: testFile, encoding: .utf8)
        try text.replacingOccurrences(of: "stream: orders.errors", with: "stream: orders.erors").write(
            to: testFile, atomically: true, encoding: .utf8)
        let misspelt = try runRivulet(["test", testFile.path])
        XCTAssertEqual(misspelt.status, 1)
        assertContains(
            misspelt.stdout,
            "t.test.yaml:4:13: error: stream 'orders' has no side stream 'erors'; did you mean 'errors'?\n"
                + "          stream: orders.erors\n")
    }

    func testSinksAndKeyedOperatorsRouteTheirElementErrorsToo() throws {
        let result = try run(
            """
            streams:
              words:
                source: { events: [{ at: 0ms, next: { w: ab } }, { at: 1ms, next: { w: 7 } }, { at: 2ms, next: { w: cd } }, { at: 3ms, complete: true }] }
                ops:
                  - id: changed
                    distinctUntilChanged: len(.w)
                    onError: errors
            sinks:
              - { stream: words, stdout: { template: "{{ upper(.w) }}" } }
              - { stream: words, id: grid, table: { columns: [{ title: W, value: len(.w) }] }, onError: skip }
              - { stream: changed.errors, stdout: { template: "dropped {{ .element.w }} at {{ .location }}" } }
            """, ["--clock", "virtual"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("dropped 7 at ") && $0.hasSuffix(":6:9") }, result.stdout)
        XCTAssertTrue(lines.contains("AB"), result.stdout)
        XCTAssertFalse(lines.contains("CD"), "cd has the same key length as ab: \(result.stdout)")
        let skippedByStdout = try run(
            """
            source: { events: [{ at: 0ms, next: ab }, { at: 1ms, next: 7 }, { at: 2ms, complete: true }] }
            sink: { stdout: { template: "{{ upper(.) }}", onError: skip } }
            """, ["--clock", "virtual"])
        XCTAssertEqual(skippedByStdout.status, 0, skippedByStdout.stderr)
        XCTAssertEqual(skippedByStdout.stdout, "AB\n")
        assertContains(skippedByStdout.stderr, "warning: stdout skipped 1 element")
    }
}
