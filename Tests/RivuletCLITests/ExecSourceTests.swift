import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// The `exec` source through the binary, with real programs: lines as elements, the exit status
/// ending the stream, and the program stopped when the pipeline stops first.
final class ExecSourceTests: BinaryTestCase {
    private func write(_ name: String, _ script: String) throws {
        try script.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func testEachLineIsAnElementAndStatusZeroCompletes() throws {
        try write(
            "produce.py",
            """
            import json
            for n in range(3):
                print(json.dumps({"n": n}), flush=True)
            """)
        let result = try run(
            """
            source: { exec: [python3, ./produce.py] }
            ops:
              - map: .n * 10
            sink: stdout
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "0\n10\n20\n")
    }

    func testTextLinesAndAMalformedLineUnderEachMode() throws {
        try write("mixed.sh", "echo '{\"a\": 1}'\necho 'oops'\necho '{\"a\": 2}'\n")
        let text = try run(
            """
            source: { exec: { command: [sh, ./mixed.sh], format: text } }
            sink: stdout
            """)
        XCTAssertEqual(text.stdout, "\"{\\\"a\\\": 1}\"\n\"oops\"\n\"{\\\"a\\\": 2}\"\n", text.stderr)
        let failing = try run("source: { exec: [sh, ./mixed.sh] }\nsink: stdout\n")
        XCTAssertEqual(failing.status, 1)
        XCTAssertEqual(failing.stdout, "{\"a\":1}\n")
        assertContains(failing.stderr, "error: exec: the output of 'sh ", "mixed.sh' line 2: ")
        let skipping = try run("source: { exec: { command: [sh, ./mixed.sh], onError: skip } }\nsink: stdout\n")
        XCTAssertEqual(skipping.status, 0, skipping.stderr)
        XCTAssertEqual(skipping.stdout, "{\"a\":1}\n{\"a\":2}\n")
        assertContains(skipping.stderr, "warning: exec skipped 1 element")
    }

    func testANonZeroExitFailsTheRunQuotingItsStandardError() throws {
        try write(
            "fail.py",
            """
            import sys
            print('{"ok": true}', flush=True)
            sys.stderr.write("Traceback (most recent call last):\\nValueError: the feed is gone\\n")
            sys.exit(3)
            """)
        let result = try run("source: { exec: [python3, ./fail.py] }\nsink: stdout\n")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "{\"ok\":true}\n", "what came before the failure is written")
        assertContains(result.stderr, "/fail.py' exited with status 3", "ValueError: the feed is gone")
    }

    func testAMissingProgramIsAClearError() throws {
        let result = try run("source: { exec: [no-such-program-xyz] }\nsink: stdout\n")
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "'no-such-program-xyz' exited with status 127")
    }

    /// Whether `pid` has ended and waits to be reaped (state Z in /proc/PID/stat).
    static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.range(of: ") ", options: .backwards)
        else { return false }
        return stat[end.upperBound...].first == "Z"
    }

    func testTheProgramIsStoppedWhenThePipelineStopsFirst() throws {
        try write(
            "forever.py",
            """
            import json, os, time
            open("pid", "w").write(str(os.getpid()))
            n = 0
            while True:
                print(json.dumps(n), flush=True)
                n += 1
                time.sleep(0.01)
            """)
        let result = try run(
            """
            source: { exec: [python3, ./forever.py] }
            ops:
              - take: 3
            sink: stdout
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "0\n1\n2\n")
        let pid = try XCTUnwrap(
            Int32(try String(contentsOf: directory.appendingPathComponent("pid"), encoding: .utf8)))
        // It was sent SIGTERM; give it a moment to go. Once rivulet has exited, the process that
        // inherits it may be slow to reap it: a zombie has ended all the same.
        var alive = true
        for _ in 0..<100 where alive {
            alive = kill(pid, 0) == 0 && !Self.isZombie(pid)
            if alive { usleep(20_000) }
        }
        XCTAssertFalse(alive, "the program was stopped with the pipeline")
    }

    func testAProgramThatIgnoresSIGTERMAndWhatItStartedAreGoneAfterTheRun() throws {
        // Left running under init after the run: the source sent its program SIGTERM and no more.
        let marker = "rivulet-exec-source-\(UUID().uuidString.prefix(8))"
        try write(
            "\(marker).py",
            """
            import json, signal, subprocess, time
            subprocess.Popen(["sleep", "1000", "\(marker)-grandchild"])
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            n = 0
            while True:
                print(json.dumps(n), flush=True)
                n += 1
                time.sleep(0.01)
            """)
        let started = Date()
        let result = try run(
            """
            source: { exec: [python3, ./\(marker).py] }
            ops:
              - take: 3
            sink: stdout
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "0\n1\n2\n")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the run did not wait for the program")
        var left = Self.running(marker)
        for _ in 0..<100 where !left.isEmpty {
            usleep(50_000)
            left = Self.running(marker)
        }
        XCTAssertEqual(left, [], "the program and its grandchild are gone")
    }

    /// Processes (not zombies) whose command line contains `marker`.
    private static func running(_ marker: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard let pid = Int32(entry), !isZombie(pid),
                let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return false }
            return String(decoding: line, as: UTF8.self).contains(marker)
        }
    }
}
