import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// The `exec` operator (process plugins), through the binary, with a real Python program.
final class ExecTests: BinaryTestCase {

    static let plugin = """
        import json, sys
        for line in sys.stdin:
            value = json.loads(line)["value"]
            if value == "boom":
                print(json.dumps({"error": "cannot enrich boom"}), flush=True)
                continue
            if value == "crash":
                sys.stderr.write("Traceback: something broke\\n")
                sys.exit(3)
            if value == "garbage":
                print("not json at all", flush=True)
                continue
            if value == "hang":
                import time
                time.sleep(30)
            for word in str(value).split():
                print(json.dumps({"emit": {"word": word, "length": len(word)}}), flush=True)
            print(json.dumps({"done": True}), flush=True)
        """

    override func setUpWithError() throws {
        try super.setUpWithError()
        try Self.plugin.write(to: directory.appendingPathComponent("enrich.py"), atomically: true, encoding: .utf8)
    }

    private func run(_ values: [String], options: String = "") throws -> ProcessResult {
        let events = values.enumerated().map { "{ at: \($0.offset * 10)ms, next: \"\($0.element)\" }" }.joined(
            separator: ", ")
        let pipeline = """
            source: { events: [\(events), { at: 500ms, complete: true }] }
            ops:
              - exec: { command: [python3, ./enrich.py]\(options) }
            sink: stdout
            """
        let path = directory.appendingPathComponent("p.yaml")
        try pipeline.write(to: path, atomically: true, encoding: .utf8)
        return try runRivulet(["run", path.path, "--clock", "virtual"])
    }

    func testEachElementCanGiveManyOrNoElements() throws {
        let result = try run(["hello world", "", "one"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            result.stdout,
            "{\"word\":\"hello\",\"length\":5}\n{\"word\":\"world\",\"length\":5}\n{\"word\":\"one\",\"length\":3}\n")
    }

    func testAnErrorAnswerFailsOrIsSkipped() throws {
        let failed = try run(["a", "boom", "b"])
        XCTAssertEqual(failed.status, 1)
        XCTAssertEqual(failed.stdout, "{\"word\":\"a\",\"length\":1}\n")
        assertContains(
            failed.stderr, ":3:5: error: exec: 'python3 /", "/enrich.py': cannot enrich boom (element: \"boom\")")
        let skipped = try run(["a", "boom", "b"], options: ", onError: skip")
        XCTAssertEqual(skipped.status, 0, skipped.stderr)
        XCTAssertEqual(skipped.stdout, "{\"word\":\"a\",\"length\":1}\n{\"word\":\"b\",\"length\":1}\n")
    }

    func testACrashCarriesTheTailOfStandardError() throws {
        let result = try run(["a", "crash"])
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "exited with status 3 before answering", "Traceback: something broke")
    }

    func testOutputOutsideTheProtocolIsAnError() throws {
        let result = try run(["garbage"])
        XCTAssertEqual(result.status, 1)
        assertContains(
            result.stderr, "wrote a line that is not a JSON object of the exec protocol: \"not json at all\"",
            "write debug output to standard error")
    }

    func testAHangingProgramTimesOutAndTheRunEnds() throws {
        let started = Date()
        let result = try run(["hang"], options: ", timeout: 300ms")
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "did not answer within 300ms")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }

    /// Runs `ops` on one element `a` on the virtual clock; what it printed, and how long it took.
    private func runOnOneElement(_ ops: String) throws -> (result: ProcessResult, seconds: TimeInterval) {
        let path = directory.appendingPathComponent("one-\(UUID().uuidString).yaml")
        try """
        source: { events: [{ at: 0ms, next: a }, { at: 1ms, complete: true }] }
        ops: \(ops)
        sink: stdout
        """.write(to: path, atomically: true, encoding: .utf8)
        let started = Date()
        let result = try runRivulet(["run", path.path, "--clock", "virtual"])
        return (result, Date().timeIntervalSince(started))
    }

    /// The processes whose command line holds `marker`.
    private func running(_ marker: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard Int(entry) != nil,
                let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return false }
            return String(decoding: line, as: UTF8.self).contains(marker)
        }
    }

    func testAProgramThatIgnoresSIGTERMAndWhatItStartedAreKilledWhenTheRunEnds() throws {
        // Left running after rivulet exited; a grandchild holding the output kept the run going.
        let marker = "rivulet-exec-\(UUID().uuidString.prefix(8))"
        let script = """
            import json, os, subprocess, sys
            subprocess.Popen(["sleep", "1000", "\(marker)-grandchild"])
            import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)
            for line in sys.stdin:
                print(json.dumps({"emit": json.loads(line)["value"]}), flush=True)
                print(json.dumps({"done": True}), flush=True)
            import time
            time.sleep(1000)
            """
        try script.write(to: directory.appendingPathComponent("\(marker).py"), atomically: true, encoding: .utf8)
        let (result, seconds) = try runOnOneElement("[{ exec: [python3, ./\(marker).py] }]")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "\"a\"\n")
        XCTAssertLessThan(seconds, 10)
        let deadline = Date(timeIntervalSinceNow: 5)
        while !running(marker).isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertEqual(running(marker), [], "the program and its grandchild are gone")
    }

    func testAnAnswerWithoutEndFailsTheElementAtTheLimit() throws {
        // One element answered with 10,000,000 lines grew memory 5 MB/s until the timeout.
        let (result, seconds) = try runOnOneElement(
            "[{ exec: { command: [sh, -c, \"read line; yes '{\\\"emit\\\":1}'\"], timeout: 60s } }]")
        XCTAssertEqual(result.status, 1, result.stderr)
        assertContains(result.stderr, "answered one element with more than 100000 values")
        XCTAssertLessThan(seconds, 15)
    }

    func testAFiftyMegabyteAnswerIsReadInOneGo() throws {
        // One 50 MB line took 21 s: the line buffer grew a byte at a time.
        try """
        import sys
        for line in sys.stdin:
            sys.stdout.write('{"emit":"' + 'x' * 50_000_000 + '"}\\n{"done":true}\\n'); sys.stdout.flush()
        """.write(to: directory.appendingPathComponent("big.py"), atomically: true, encoding: .utf8)
        let (result, seconds) = try runOnOneElement(
            "[{ exec: { command: [python3, ./big.py], timeout: 60s } }, { map: len(.) }]")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "50000000\n")
        XCTAssertLessThan(seconds, 10)
    }

    func testAMissingProgramIsReported() throws {
        let path = directory.appendingPathComponent("m.yaml")
        try "source: { events: [{ at: 0ms, next: a }] }\nops: [{ exec: [no-such-program-rivulet] }]\nsink: stdout\n"
            .write(to: path, atomically: true, encoding: .utf8)
        let result = try runRivulet(["run", path.path, "--clock", "virtual"])
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "exec: 'no-such-program-rivulet' exited with status 127")
    }
}
