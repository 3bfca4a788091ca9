import Foundation
import XCTest

/// Event time gives the same output however the input is read: at full speed, paced in real
/// time, on the virtual clock, and split over runs with `--state` stopped by a signal or killed.
final class EventTimeRunTests: BinaryTestCase {
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Sessions per user of the clickstream fixture, written to `sessions.jsonl`, from `source`.
    private func pipeline(source: String) throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Pipelines/fixtures/clickstream.jsonl").path
        let file = path("sessions.yaml")
        try """
        name: sessions
        source: \(source.replacingOccurrences(of: "FIXTURE", with: fixture))
        eventTime: { time: "parseTime(.time, '%d/%b/%Y:%H:%M:%S %z')", maxDelay: 10s }
        ops:
          - groupBy: { key: .user, ops: [ { window: { sessionGap: 30s } } ] }
          - map: { user: ".[0].user", views: len(.), first: ".[0].time", last: ".[-1].time" }
        sink: { file: \(path("sessions.jsonl")) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    private func output() throws -> String {
        defer { try? FileManager.default.removeItem(atPath: path("sessions.jsonl")) }
        return try String(contentsOfFile: path("sessions.jsonl"), encoding: .utf8)
    }

    func testTheSameInputGivesTheSameSessionsAtAnyPaceOnAnyClockAndAcrossStops() throws {
        let fast = try runRivulet(["run", try pipeline(source: "{ file: { path: FIXTURE, format: jsonl } }")])
        XCTAssertEqual(fast.status, 0, fast.stderr)
        let expected = try output()
        XCTAssertEqual(expected.split(separator: "\n").count, 12, expected)

        // 45 views, one every 20 ms of the run's clock.
        let paced = try pipeline(source: "{ fixture: { path: FIXTURE, every: 20ms } }")
        let real = try runRivulet(["run", paced])
        XCTAssertEqual(real.status, 0, real.stderr)
        XCTAssertEqual(try output(), expected, "paced in real time")

        let virtual = try runRivulet(["run", paced, "--clock", "virtual"])
        XCTAssertEqual(virtual.status, 0, virtual.stderr)
        XCTAssertEqual(try output(), expected, "on the virtual clock")

        for signal in [SIGINT, SIGKILL] {
            let state = ["--state", path("state-\(signal).db"), "--checkpoint-interval", "50ms"]
            let first = try startRivulet(["run", paced] + state, output: .null, error: .pipe)
            Thread.sleep(forTimeInterval: 0.5)  // about half of the views
            first.send(signal)
            let stopped = first.communicate(timeout: 60)
            XCTAssertEqual(stopped.termination, signal == SIGKILL ? .signalled(SIGKILL) : .exited(130))
            let second = try runRivulet(["run", paced] + state)
            XCTAssertEqual(second.status, 0, second.stderr)
            XCTAssertTrue(second.stderr.contains("resuming 'sessions'"), second.stderr)
            XCTAssertEqual(try output(), expected, "split over two runs by \(signal == SIGKILL ? "SIGKILL" : "SIGINT")")
        }
    }
}
