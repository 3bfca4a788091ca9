import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `run --watch` and `test --watch` through the binary: a valid edit replaces the running
/// version (resuming from --state), a broken one leaves it running and prints its errors, SIGHUP
/// reads the file again, and a signal ends the watch.
final class WatchTests: BinaryTestCase {
    private func write(_ text: String, to name: String) throws -> URL {
        let file = directory.appendingPathComponent(name)
        // Written whole and renamed over the old file, as editors save.
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Ticks written as `"v1 12 ----…"`: long lines, since with --state the file sink holds back
    /// the last page it has not filled (to keep resumed files laid out as uninterrupted ones).
    private func ticking(_ prefix: String, op: String = "map") -> String {
        let padding = String(repeating: "-", count: 300)
        return
            "source: { interval: 20ms }\nops:\n  - \(op): '\"\(prefix) \" + string(.) + \" \(padding)\"'\nsink: { file: { path: out.txt } }\n"
    }

    /// Waits (up to 10 s) until `condition` holds of the output file's lines.
    private func waitForOutput(
        _ what: String, file: StaticString = #filePath, line: UInt = #line, _ condition: ([String]) -> Bool
    ) -> [String] {
        var lines: [String] = []
        for _ in 0..<200 {
            let text = (try? String(contentsOf: directory.appendingPathComponent("out.txt"), encoding: .utf8)) ?? ""
            lines = text.split(separator: "\n").map(String.init)
            if condition(lines) { return lines }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTFail("never \(what): \(lines.suffix(5))", file: file, line: line)
        return lines
    }

    func testAValidEditReplacesTheRunABrokenOneLeavesItAndSIGHUPReloads() throws {
        let pipeline = try write(ticking("v1"), to: "ticks.yaml")
        let state = directory.appendingPathComponent("state.db").path
        let process = try startRivulet(["run", pipeline.path, "--watch", "--state", state], output: .null)
        defer {
            if process.exited() == nil { process.send(SIGKILL) }
        }
        _ = waitForOutput("v1 lines") { $0.count >= 3 }
        _ = try write(ticking("v2"), to: "ticks.yaml")
        _ = waitForOutput("v2 lines") { $0.filter { $0.hasPrefix("\"v2 ") }.count >= 3 }
        // A broken edit: the errors are printed and v2 goes on.
        _ = try write(ticking("v3", op: "mapp"), to: "ticks.yaml")
        Thread.sleep(forTimeInterval: 0.6)
        let before = waitForOutput("output") { !$0.isEmpty }.count
        _ = waitForOutput("more v2 lines after the broken edit") {
            $0.count >= before + 3 && $0.last?.hasPrefix("\"v2 ") == true
        }
        // Fixed, without the file watcher seeing it (the same size and second): SIGHUP reads it.
        _ = try write(ticking("v4"), to: "ticks.yaml")
        process.send(SIGHUP)
        let lines = waitForOutput("v4 lines") { $0.filter { $0.hasPrefix("\"v4 ") }.count >= 3 }
        process.send(SIGTERM)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination.status, 143)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        assertContains(
            stderr, "watch: \(pipeline.path) changed; stopping the running version and starting the new one",
            "error: watch: \(pipeline.path) changed but has 1 error; the running version goes on",
            "ticks.yaml:3:5: error: unknown operator 'mapp'; did you mean 'map'?", "run interrupted: ")
        XCTAssertFalse(lines.contains { $0.hasPrefix("\"v3 ") }, "the broken version never ran")
        // With --state each version goes on from where the last one stopped: every tick once, in order.
        let final = waitForOutput("the last lines") { $0.count >= lines.count }
        let ticks = final.map { Int($0.split(separator: " ")[1])! }
        XCTAssertEqual(ticks, Array(0..<ticks.count), "\(final)")
        XCTAssertEqual(
            final.map { $0.prefix(3) }.reduce(into: [Substring]()) { if $0.last != $1 { $0.append($1) } },
            ["\"v1", "\"v2", "\"v4"])
    }

    func testTheTextOfTheRunningVersionAgainRestartsNothing() throws {
        let pipeline = try write(ticking("v1"), to: "same.yaml")
        let process = try startRivulet(["run", pipeline.path, "--watch"], output: .null)
        defer {
            if process.exited() == nil { process.send(SIGKILL) }
        }
        _ = waitForOutput("v1 lines") { $0.count >= 3 }
        // Saved without a change (a new stamp for the watcher), and a SIGHUP.
        _ = try write(ticking("v1"), to: "same.yaml")
        process.send(SIGHUP)
        let before = waitForOutput("output") { !$0.isEmpty }.count
        let lines = waitForOutput("more lines of the same run") { $0.count >= before + 10 }
        process.send(SIGTERM)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination.status, 143)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        assertContains(stderr, "watch: \(pipeline.path) is the version already running; it goes on")
        XCTAssertFalse(stderr.contains("stopping the running version"), stderr)
        // Without --state a new version starts its file anew: one run wrote every tick once.
        let ticks = lines.map { Int($0.split(separator: " ")[1])! }
        XCTAssertEqual(ticks, Array(0..<ticks.count))
    }

    func testARunThatEndsWaitsForAChangeAndStandardInputCannotBeWatched() throws {
        let pipeline = try write(
            "source: { interval: 10ms }\nops:\n  - take: 3\nsink: { file: { path: out.txt } }\n", to: "short.yaml")
        // Standard error goes to a file, read while the run goes on: the second "run ended" is
        // written after the new version's lines, and a stop sent on seeing them could come first.
        let errors = directory.appendingPathComponent("stderr.txt")
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        let process = try ChildProcess(
            executable: "sh",
            arguments: [
                "-c", "exec env RIVULET_LEAK_CHECK=1 \"$0\" run \"$1\" --watch --clock virtual 2>\"$2\"", binary,
                pipeline.path, errors.path,
            ], output: .null)
        defer {
            if process.exited() == nil { process.send(SIGKILL) }
        }
        let ended = "watch: the run ended; waiting for \(pipeline.path) to change"
        func endsSaid() -> Int {
            ((try? String(contentsOf: errors, encoding: .utf8)) ?? "").components(separatedBy: ended).count - 1
        }
        _ = waitForOutput("three lines") { $0 == ["0", "1", "2"] && endsSaid() == 1 }
        _ = try write(
            "source: { interval: 10ms }\nops:\n  - take: 2\n  - map: . * 10\nsink: { file: { path: out.txt } }\n",
            to: "short.yaml")
        _ = waitForOutput("the new version's lines, then its end") { $0 == ["0", "10"] && endsSaid() == 2 }
        process.send(SIGINT)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination.status, 130)
        XCTAssertEqual(endsSaid(), 2, (try? String(contentsOf: errors, encoding: .utf8)) ?? "")

        let standardInput = try runRivulet(["run", "-", "--watch"], stdin: "source: { interval: 1s }\nsink: stdout\n")
        XCTAssertEqual(standardInput.status, 2)
        XCTAssertTrue(standardInput.stderr.contains("--watch needs a pipeline file, not standard input"))
    }

    func testTestWatchRunsTheTestsAgainWhenThePipelineChanges() throws {
        _ = try write(
            "source: { events: [{ at: 0ms, next: 1 }] }\nops:\n  - map: . * 2\nsink: stdout\n", to: "double.yaml")
        _ = try write(
            """
            pipeline: double.yaml
            tests:
              - name: doubles
                inputs: { source: [{ at: 0ms, next: 2 }, { at: 1ms, complete: true }] }
                expect: [{ at: 0ms, next: 4 }, { at: 1ms, complete: true }]
            """, to: "double.test.yaml")
        let process = try startRivulet(["test", directory.path, "--watch"])
        defer {
            if process.exited() == nil { process.send(SIGKILL) }
        }
        Thread.sleep(forTimeInterval: 1.5)
        _ = try write(
            "source: { events: [{ at: 0ms, next: 1 }] }\nops:\n  - map: . * 3\nsink: stdout\n", to: "double.yaml")
        Thread.sleep(forTimeInterval: 1.5)
        process.send(SIGINT)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination.status, 130)
        let stdout = String(decoding: output.standardOutput, as: UTF8.self)
        assertContains(stdout, "1 passed, 0 failed")
        XCTAssertTrue(stdout.contains("0 passed, 1 failed"), "run again after the edit:\n\(stdout)")
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertEqual(stderr.components(separatedBy: "watch: waiting for a change").count - 1, 2, stderr)
    }
}
