import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// A watched `partitionBy` (`--metrics`, `top`) runs on its threads and shows, for each partition,
/// the elements sent to it, its lag and, under `--state`, the bytes of its state.
final class PartitionMetricsTests: BinaryTestCase {
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The value of `metric` for each of 4 partitions of `ops.0`.
    private func perPartition(_ metrics: String, _ metric: String) -> [Double?] {
        (0..<4).map { partition in
            LoopbackHTTP.sample(
                metrics, metric, [#"place="ops.0""#, #"component="partitionBy""#, #"partition="\#(partition)""#])
        }
    }

    /// `/metrics` once `done` holds of it (or after 10 s).
    private func metrics(_ port: Int, until done: (String) -> Bool) -> String {
        var metrics = ""
        let deadline = Date(timeIntervalSinceNow: 10)
        repeat {
            Thread.sleep(forTimeInterval: 0.05)
            metrics = LoopbackHTTP.get(port, "/metrics")?.body ?? ""
        } while !done(metrics) && Date() < deadline
        return metrics
    }

    func testAWatchedRunShowsEachPartitionsElementsLagAndStateAndKeepsItsStateAcrossAKill() throws {
        // Keys a, b, c: FNV-1a 32 modulo 4 puts a in partition 0, b in 1, c in 2; 3 gets none.
        try (["a", "b", "a", "c", "b", "a"].map { #"{"k":"\#($0)"}"# }.joined(separator: "\n") + "\n")
            .write(toFile: path("in.jsonl"), atomically: true, encoding: .utf8)
        let pipeline = """
            source: { file: { path: in.jsonl, follow: true, poll: 10ms } }
            ops:
              - partitionBy: { key: .k, partitions: 4, threads: 2, ops: [ { dedupe: { key: .k } } ] }
            sink: { file: out.jsonl }
            """
        let arguments = ["--state", path("s.db"), "--checkpoint-interval", "50ms"]
        let (run, port) = try startWatched(pipeline, arguments: arguments)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let elements = "rivulet_partition_elements_total"
        let lag = "rivulet_partition_lag"
        let state = "rivulet_partition_state_bytes"
        // A partition that remembers a key holds more than partition 3, which remembers none
        // (its state as stored is an empty list).
        func remembersKeys(_ bytes: [Double?]) -> Bool {
            guard let empty = bytes[3] else { return false }
            return bytes.prefix(3).allSatisfy { ($0 ?? 0) > empty }
        }
        var metrics = self.metrics(port) { metrics in
            self.perPartition(metrics, elements) == [3, 2, 1, 0] && self.perPartition(metrics, lag) == [0, 0, 0, 0]
                && remembersKeys(self.perPartition(metrics, state))
        }
        XCTAssertEqual(perPartition(metrics, elements), [3, 2, 1, 0], metrics)
        XCTAssertEqual(perPartition(metrics, lag), [0, 0, 0, 0], metrics)
        XCTAssertTrue(remembersKeys(perPartition(metrics, state)), "a, b and c remembered: \(metrics)")
        // Watched, the partitions still run on threads of their own.
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(run.pid)/task")) ?? []
        let names = Set(
            tasks.compactMap {
                (try? String(contentsOfFile: "/proc/\(run.pid)/task/\($0)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            })
        XCTAssertTrue(names.isSuperset(of: ["partition-0", "partition-1"]), "\(names)")

        // top shows a table of the partitions under the component's row.
        let view = try runRivulet(["top", "127.0.0.1:\(port)", "ops.0"])
        XCTAssertEqual(view.status, 0, view.stderr)
        let lines = view.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let title = try XCTUnwrap(lines.firstIndex(of: "ops.0 partitionBy by partition"), view.stdout)
        let header = lines[title + 1].split(separator: " ")
        // Plain titles, the state's size in bytes as people read it.
        XCTAssertEqual(header, ["PARTITION", "ELEMENTS/s", "ELEMENTS", "QUEUED", "STATE"], view.stdout)
        let rows = lines[(title + 2)...].prefix(4).map { $0.split(separator: " ").map(String.init) }
        XCTAssertEqual(rows.map(\.first), ["0", "1", "2", "3"], view.stdout)
        XCTAssertEqual(rows.map { $0[2] }, ["3", "2", "1", "0"], view.stdout)
        XCTAssertEqual(rows.map { $0[3] }, ["0", "0", "0", "0"], view.stdout)
        XCTAssertTrue(rows.allSatisfy { $0[4].hasSuffix("B") }, view.stdout)
        XCTAssertTrue(remembersKeys(rows.map { Double($0[4].dropLast()) }), view.stdout)

        // Killed and run again: each partition's state is back (the next checkpoint measures the
        // same keys), and an `a` more is a repeat.
        run.send(SIGKILL)
        _ = run.wait()
        let (again, portAgain) = try startWatched(pipeline, arguments: arguments)
        defer { if again.exited() == nil { again.send(SIGKILL) } }
        metrics = self.metrics(portAgain) { self.perPartition($0, state).allSatisfy { $0 != nil } }
        XCTAssertTrue(remembersKeys(perPartition(metrics, state)), "restored: \(metrics)")
        let appended = try FileHandle(forWritingTo: URL(fileURLWithPath: path("in.jsonl")))
        appended.seekToEndOfFile()
        appended.write(Data(#"{"k":"a"}"#.utf8 + [0x0A]))
        try appended.close()
        metrics = self.metrics(portAgain) { self.perPartition($0, elements) == [1, 0, 0, 0] }
        XCTAssertEqual(perPartition(metrics, elements), [1, 0, 0, 0], metrics)
        again.send(SIGTERM)
        XCTAssertEqual(again.communicate(input: [], timeout: 30).termination.status, 143)
        let written = try String(contentsOfFile: path("out.jsonl"), encoding: .utf8)
        XCTAssertEqual(
            written.split(separator: "\n").map(String.init).sorted(),
            [#"{"k":"a"}"#, #"{"k":"b"}"#, #"{"k":"c"}"#])
    }

    func testWithoutStateEachPartitionsStateIsMeasuredOnItsThreadEverySecond() throws {
        try (["a", "b", "a", "c"].map { #"{"k":"\#($0)"}"# }.joined(separator: "\n") + "\n")
            .write(toFile: path("in.jsonl"), atomically: true, encoding: .utf8)
        let (run, port) = try startWatched(
            """
            source: { file: { path: in.jsonl, follow: true, poll: 10ms } }
            ops:
              - partitionBy: { key: .k, partitions: 4, threads: 2, ops: [ { dedupe: { key: .k } } ] }
            sink: { file: out.jsonl }
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let state = "rivulet_partition_state_bytes"
        let metrics = self.metrics(port) { self.perPartition($0, state).allSatisfy { $0 != nil } }
        let bytes = perPartition(metrics, state)
        // a, b and c remembered, one a partition; partition 3 an empty list.
        XCTAssertEqual(bytes[3], 2, metrics)
        XCTAssertTrue(bytes.prefix(3).allSatisfy { ($0 ?? 0) > 2 }, metrics)
        XCTAssertEqual(perPartition(metrics, "rivulet_partition_elements_total"), [2, 1, 1, 0], metrics)
        run.send(SIGTERM)
        XCTAssertEqual(run.communicate(input: [], timeout: 30).termination.status, 143)
    }

    /// A watched `eventTime` shows its watermark, how far it is behind the wall clock, how many
    /// elements wait for it and how many windows and keys the aggregates on it hold (read every
    /// second): in `/metrics`, in `/stats` and in `top`, under plain titles.
    func testAWatchedEventTimeShowsItsWatermarkHowFarBehindItIsAndWhatWaits() throws {
        // A second apart from 1,000,000,000,000 ms (2001): with maxDelay 10 s the watermark is the
        // last time less 10 s, and the ten elements after it wait (the map takes them in order).
        // The aggregate has emitted its window [0 s, 5 s) and holds [5 s, 10 s): keys 2, 0, 1.
        try
            ((0..<20).map { #"{"t":\#(1_000_000_000_000 + $0 * 1000),"k":\#($0 % 3)}"# }.joined(separator: "\n")
            + "\n")
            .write(toFile: path("times.jsonl"), atomically: true, encoding: .utf8)
        let (run, port) = try startWatched(
            """
            source: { file: { path: times.jsonl, follow: true, poll: 10ms } }
            eventTime: { time: .t, maxDelay: 10s }
            ops:
              - map: .
              - aggregate: { by: .k, every: 5s, fields: { n: count } }
            sink: { file: out.jsonl }
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let component = [#"component="eventTime""#]
        let metrics = self.metrics(port) { metrics in
            LoopbackHTTP.sample(metrics, "rivulet_event_time_waiting", component) == 10
        }
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_watermark_ms", component), 1_000_000_009_000, metrics)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_event_time_waiting", component), 10, metrics)
        let behind = try XCTUnwrap(LoopbackHTTP.sample(metrics, "rivulet_watermark_behind_ms", component))
        let expected = Date().timeIntervalSince1970 * 1000 - 1_000_000_009_000
        XCTAssertLessThan(abs(behind - expected), 5_000, "the wall clock less the watermark: \(metrics)")
        XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_event_time_windows_open", component), 1, metrics)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_event_time_keys_held", component), 3, metrics)

        // /stats has them by name, and top shows them as a time and counts under plain titles.
        let stats = try XCTUnwrap(LoopbackHTTP.get(port, "/stats")?.body)
        assertContains(stats, #""watermark_ms":1000000009000"#, #""event_time_windows_open":1"#)
        let view = try runRivulet(["top", "127.0.0.1:\(port)"])
        XCTAssertEqual(view.status, 0, view.stderr)
        let lines = view.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let header = try XCTUnwrap(lines.firstIndex { $0.first == "EVENT" }, view.stdout)
        XCTAssertEqual(
            lines[header],
            ["EVENT", "TIME", "COMPONENT", "WATERMARK", "BEHIND", "WAITING", "WINDOWS", "KEYS", "LATE/s", "LATE"],
            view.stdout)
        let row = lines[header + 1]
        XCTAssertEqual(row.prefix(3), ["ops.0", "eventTime", "2001-09-09T01:46:49.000Z"], view.stdout)
        XCTAssertEqual(Array(row.suffix(5)), ["10", "1", "3", "0.0", "0"], view.stdout)
        run.send(SIGTERM)
        _ = run.wait()
    }
}
