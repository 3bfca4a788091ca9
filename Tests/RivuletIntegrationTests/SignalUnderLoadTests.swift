import BinaryTestSupport
import Components
import Foundation
import XCTest

/// SIGTERM and SIGINT stop a run promptly even while a source emits as fast as it can: the source
/// loop checks for the interruption between elements, the sinks are flushed, and the exit status
/// is 143 or 130.
final class SignalUnderLoadTests: BinaryTestCase {
    private func writeMillionRecordFixtures() throws {
        var lines = Data()
        var array = Data("[".utf8)
        for i in 0..<1_000_000 {
            let record = "{\"id\": \(i), \"name\": \"record \(i)\"}"
            lines.append(Data((record + "\n").utf8))
            array.append(Data(((i == 0 ? "" : ",") + record).utf8))
        }
        array.append(Data("]".utf8))
        try lines.write(to: directory.appendingPathComponent("in.jsonl"))
        try array.write(to: directory.appendingPathComponent("in.json"))
    }

    /// Starts the run, waits until its sink has written something, sends `signal`, and returns how
    /// it ended and how long after the signal.
    private func interrupt(_ fixture: String, clock: String, with signal: Int32) throws -> (
        ChildProcess.Termination, TimeInterval, Int
    ) {
        let out = directory.appendingPathComponent("out-\(fixture)-\(clock)-\(signal).jsonl")
        let pipeline = directory.appendingPathComponent("p.yaml")
        try "source: { fixture: \(fixture) }\nops: [{ map: { id: .id } }]\nsink: { file: \(out.lastPathComponent) }\n"
            .write(to: pipeline, atomically: true, encoding: .utf8)
        let process = try startRivulet(["run", pipeline.path, "--clock", clock], output: .null, error: .null)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline,
            ((try? FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) ?? 0) < 8192
        {
            usleep(2000)
        }
        let sent = Date()
        process.send(signal)
        let termination = process.wait()
        let elapsed = Date().timeIntervalSince(sent)
        let written = try Data(contentsOf: out)
        XCTAssertEqual(written.last, 0x0A, "whole lines only")
        return (termination, elapsed, written.split(separator: 0x0A).count)
    }

    func testSignalsStopAnUnpacedMillionRecordFixtureWithinAHundredMilliseconds() throws {
        try writeMillionRecordFixtures()
        for (fixture, clock, signal) in [
            ("in.jsonl", "real", SIGTERM), ("in.jsonl", "real", SIGINT), ("in.json", "real", SIGTERM),
            ("in.jsonl", "virtual", SIGTERM), ("in.json", "virtual", SIGINT),
        ] {
            let (termination, elapsed, lines) = try interrupt(fixture, clock: clock, with: signal)
            let label = "\(fixture) on the \(clock) clock, signal \(signal)"
            XCTAssertEqual(termination, .exited(128 + signal), label)
            XCTAssertLessThan(elapsed, 0.1, "\(label): exited \(Int(elapsed * 1000)) ms after the signal")
            XCTAssertLessThan(lines, 1_000_000, "\(label): stopped before the end")
        }
    }
}

/// A process plugin that takes long to answer does not hold a signal up either.
final class SignalDuringExecTests: BinaryTestCase {
    /// slow.yaml: one element, which a program takes 30 s to answer.
    static func writeSlowPipeline(in directory: URL) throws -> URL {
        let pipeline = directory.appendingPathComponent("slow.yaml")
        try """
        source: { events: [{ at: 0ms, next: 1 }, { at: 10ms, complete: true }] }
        ops:
          - exec: { command: [sh, -c, "sleep 30"], timeout: 20s }
        sink: stdout

        """.write(to: pipeline, atomically: true, encoding: .utf8)
        return pipeline
    }

    func testASignalStopsARunWaitingForASlowProgram() throws {
        let pipeline = try Self.writeSlowPipeline(in: directory)
        let process = try startRivulet(["run", pipeline.path], output: .null, error: .pipe)
        Thread.sleep(forTimeInterval: 0.5)
        let sent = Date()
        process.send(SIGTERM)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination, .exited(143))
        XCTAssertLessThan(Date().timeIntervalSince(sent), 0.1)
    }
}

/// A producer faster than the pipeline: standard input is read only as fast as the pipeline takes
/// it, so memory stays flat, and a signal does not wait for a backlog to drain.
final class StandardInputFloodTests: BinaryTestCase {
    func testAFloodOnStandardInputStaysUnderAHundredMegabytesAndStopsAtOnce() throws {
        let pipeline = directory.appendingPathComponent("flood.yaml")
        try """
        source: { stdin: jsonl }
        ops: [{ map: "{ id: .id, text: upper(.text) + lower(.text) + trim(.text) }" }]
        sink: stdout

        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let rivulet = productsDirectory().appendingPathComponent("rivulet").path
        let line = #"{"id": 12345, "text": "some text to transform into something else entirely"}"#
        let process = try ChildProcess(
            executable: "bash",
            arguments: ["-c", "yes '\(line)' | exec '\(rivulet)' run '\(pipeline.path)' > /dev/null"],
            input: .null, output: .null, error: .pipe)
        // bash execs rivulet in the pipeline's last command: find it by its parent.
        var peakKilobytes = 0
        var rivuletPID: Int32?
        for _ in 0..<40 {
            usleep(100_000)
            rivuletPID = rivuletPID ?? Self.child(of: process.pid, named: "rivulet")
            if let pid = rivuletPID { peakKilobytes = max(peakKilobytes, Self.residentKilobytes(pid) ?? 0) }
        }
        let pid = try XCTUnwrap(rivuletPID, "rivulet is running")
        XCTAssertGreaterThan(peakKilobytes, 0)
        XCTAssertLessThan(peakKilobytes, 100 * 1024, "peak RSS \(peakKilobytes / 1024) MB")
        let sent = Date()
        kill(pid, SIGTERM)
        let output = process.communicate(timeout: 30)
        XCTAssertLessThan(Date().timeIntervalSince(sent), 1.0)
        XCTAssertEqual(output.termination, .exited(143), String(decoding: output.standardError, as: UTF8.self))
    }

    static func residentKilobytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
    }

    static func child(of parent: Int32, named name: String) -> Int32? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in entries {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let command = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            if command == name, fields.count > 1, Int32(fields[1]) == parent { return pid }
        }
        return nil
    }
}

/// A signal that comes before the run has begun: while `run -` waits for its pipeline on standard
/// input, and for commands that have nothing to flush.
final class SignalWhileStartingTests: BinaryTestCase {
    /// A signal sent before any of rivulet's code runs (here by a library preloaded into it, whose
    /// initialiser runs once the loader is done and before main) is held, not acted on by the
    /// default action, and the run stops on it as on any other: exit 143.
    func testASignalBeforeMainIsHeldUntilTheRunActsOnIt() throws {
        let source = directory.appendingPathComponent("signal-at-start.c")
        try """
        #include <signal.h>
        #include <unistd.h>
        __attribute__((constructor)) static void signal_at_start(void) { kill(getpid(), SIGTERM); }

        """.write(to: source, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("signal-at-start.so")
        let compiler = try ChildProcess(
            executable: "clang", arguments: ["-shared", "-fPIC", "-o", library.path, source.path])
        XCTAssertEqual(compiler.communicate(timeout: 60).termination, .exited(0))
        let pipeline = directory.appendingPathComponent("ticks.yaml")
        try "source: { interval: 1s }\nsink: stdout\n".write(to: pipeline, atomically: true, encoding: .utf8)
        let process = try startRivulet(
            ["run", pipeline.path], environment: ["LD_PRELOAD": library.path], output: .null, error: .null)
        let output = process.communicate(timeout: 30)
        XCTAssertFalse(output.timedOut, "the signal was not acted on")
        XCTAssertEqual(output.termination, .exited(143))
    }

    /// `run -` reading a pipeline that never comes held SIGTERM blocked with nobody waiting for it,
    /// and went on waiting until standard input closed.
    func testASignalWhileThePipelineIsReadFromStandardInputEndsTheRunAtOnce() throws {
        for signal in [SIGTERM, SIGINT] {
            let process = try startRivulet(["run", "-"], input: .pipe, output: .null, error: .null)
            Thread.sleep(forTimeInterval: 0.5)
            let sent = Date()
            process.send(signal)
            // Standard input stays open until the process ends (communicate would close it, and
            // the run then read an empty pipeline: exit 2 when the signal thread came second).
            while process.exited() == nil && Date().timeIntervalSince(sent) < 10 {
                Thread.sleep(forTimeInterval: 0.01)
            }
            let waited = Date().timeIntervalSince(sent)
            let output = process.communicate(timeout: 10)
            XCTAssertLessThan(waited, 10, "signal \(signal) was not acted on")
            XCTAssertEqual(output.termination, .exited(128 + signal))
            XCTAssertLessThan(waited, 1)
        }
    }

    /// `rivulet test` (without --watch) has nothing of its own to flush: a signal ends it by its
    /// default action, as any program, instead of waiting, blocked, until the tests are done.
    func testATestRunEndsOnASignalByItsDefaultAction() throws {
        _ = try SignalDuringExecTests.writeSlowPipeline(in: directory)
        try """
        pipeline: slow.yaml
        tests:
          - name: waits for a slow program
            expect: [{ at: 10ms, next: 1 }]

        """.write(to: directory.appendingPathComponent("slow.test.yaml"), atomically: true, encoding: .utf8)
        let process = try startRivulet(
            ["test", directory.appendingPathComponent("slow.test.yaml").path], output: .null, error: .null)
        Thread.sleep(forTimeInterval: 0.5)
        let sent = Date()
        process.send(SIGTERM)
        let output = process.communicate(timeout: 60)
        XCTAssertEqual(output.termination, .signalled(SIGTERM))
        XCTAssertLessThan(Date().timeIntervalSince(sent), 1)
    }
}
