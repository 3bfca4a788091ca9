import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// A write that fails is a run that fails: exit 1 and a message naming the sink and the error. A
/// reader that closes standard output early ends the run quietly, as SIGPIPE would.
final class OutputErrorTests: BinaryTestCase {
    private func shell(_ command: String) throws -> ChildProcess.Output {
        let process = try ChildProcess(
            executable: "bash", arguments: ["-c", command], input: .null, output: .pipe, error: .pipe)
        return process.communicate(timeout: 120)
    }

    private var rivulet: String { productsDirectory().appendingPathComponent("rivulet").path }

    private func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testAFullDiskFailsTheRunNamingTheSink() throws {
        for format in ["jsonl", "json", "csv"] {
            let path = try write(
                "full-\(format).yaml",
                "source: { events: [{ at: 0ms, next: { a: 1 } }, { at: 1ms, complete: true }] }\n"
                    + "sink: { file: { path: /dev/full, format: \(format) } }\n")
            let result = try runRivulet(["run", path])
            XCTAssertEqual(result.status, 1, "\(format): \(result.stderr)")
            assertContains(result.stderr, ":2:9: error: file: writing '/dev/full", "No space left on device")
        }
        let stdout = try write(
            "stdout.yaml", "source: { events: [{ at: 0ms, next: a }, { at: 1ms, complete: true }] }\nsink: stdout\n")
        let redirected = try shell("'\(rivulet)' run '\(stdout)' > /dev/full")
        XCTAssertEqual(redirected.termination, .exited(1))
        let message = String(decoding: redirected.standardError, as: UTF8.self)
        assertContains(message, "stdout: writing to standard output: No space left on device")
    }

    func testACommandThatDescribesFailsWhenItsOutputCannotBeWritten() throws {
        // schema, graph and components once exited 0 having written nothing.
        let pipeline = try write("p.yaml", "source: { events: [] }\nsink: stdout\n")
        for command in ["schema", "graph '\(pipeline)'", "components", "components debounce"] {
            let full = try shell("'\(rivulet)' \(command) > /dev/full")
            XCTAssertEqual(full.termination, .exited(1), command)
            assertContains(
                String(decoding: full.standardError, as: UTF8.self),
                "error: cannot write to standard output: No space left on device")
            let closed = try shell("'\(rivulet)' \(command) | head -c 1 > /dev/null; exit ${PIPESTATUS[0]}")
            XCTAssertTrue([.exited(0), .exited(141)].contains(closed.termination), "\(command): \(closed.termination)")
            XCTAssertEqual(String(decoding: closed.standardError, as: UTF8.self), "", command)
        }
    }

    func testAClosedPipeEndsTheRunQuietly() throws {
        let items = (0..<200_000).map { "{\"n\": \($0)}" }.joined(separator: ",")
        _ = try write("big.json", "[\(items)]")
        let pipeline = try write("p.yaml", "source: { fixture: big.json }\nsink: stdout\n")
        let result = try shell("'\(rivulet)' run '\(pipeline)' | head -1; exit ${PIPESTATUS[0]}")
        XCTAssertEqual(String(decoding: result.standardOutput, as: UTF8.self), "{\"n\":0}\n")
        XCTAssertEqual(String(decoding: result.standardError, as: UTF8.self), "")
        XCTAssertEqual(result.termination, .exited(141))
    }

    func testLeftoversOfKilledJSONRunsAreRemovedAndALiveRunsKept() throws {
        let dead = directory.appendingPathComponent("out.json.tmp-2147483646")
        let live = directory.appendingPathComponent("out.json.tmp-\(getpid())")
        try "[{\"half".write(to: dead, atomically: true, encoding: .utf8)
        try "[".write(to: live, atomically: true, encoding: .utf8)
        let pipeline = try write(
            "p.yaml",
            "source: { events: [{ at: 0ms, next: 1 }, { at: 1ms, complete: true }] }\nsink: { file: out.json }\n")
        let result = try runRivulet(["run", pipeline])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dead.path), "a dead run's leftover is removed")
        XCTAssertTrue(FileManager.default.fileExists(atPath: live.path), "a live run's file is kept")
        XCTAssertEqual(
            try String(contentsOf: directory.appendingPathComponent("out.json"), encoding: .utf8), "[\n1\n]\n")
    }

    func testAnExpressionErrorInATableCellFailsTheRun() throws {
        try assertTableFailsOnLen(
            "table.yaml", events: "{ at: 0ms, next: [{ a: 1 }] }", table: "columns: [{ title: A, value: len(.a) }]")
    }

    /// A `key` that cannot be evaluated for an element fails the run as a cell does, after the
    /// rows before it were written.
    func testAnExpressionErrorInATablesKeyFailsTheRun() throws {
        let result = try assertTableFailsOnLen(
            "keyed.yaml", events: "{ at: 0ms, next: { a: \"x\" } }, { at: 1ms, next: { a: 1 } }",
            table: "columns: [{ title: A, value: .a }], key: [len(.a)]")
        assertContains(result.stdout, "x")
    }

    /// Runs `events` (then completion) into `table: { TABLE }`, which calls len() on a number:
    /// the run fails with exit 1 and len()'s error.
    @discardableResult
    private func assertTableFailsOnLen(_ name: String, events: String, table: String) throws -> ProcessResult {
        let pipeline = try write(
            name, "source: { events: [\(events), { at: 9ms, complete: true }] }\nsink: { table: { \(table) } }\n")
        let result = try runRivulet(["run", pipeline])
        XCTAssertEqual(result.status, 1, result.stderr)
        assertContains(result.stderr, "error: table: len() expects")
        return result
    }
}
