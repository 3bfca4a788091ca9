@_spi(Host) import Components
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
