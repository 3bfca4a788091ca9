import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// `partitionBy` in real runs, where its partitions run on threads of their own: each keyed
/// operator gives per key what it gives without partitions, whatever the partitions and threads.
final class PartitionRunTests: BinaryTestCase {
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// `count` records `{key, v, ts}` over `keys` keys and 20 minutes of event time, one in 20 up
    /// to 8 s out of order and one in 500 a minute behind (late for a 10 s maxDelay).
    private func writeRecords(_ count: Int, keys: Int) throws -> String {
        var state: UInt64 = 42
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var text = ""
        for index in 0..<count {
            var ts = index * 1_200_000 / count
            // The first 200 come newest first: behind the first by up to 8 s, none late.
            if index < 200 { ts = 8_000 - index * 40 }
            if next() % 20 == 0 { ts -= Int(next() % 8000) }
            if next() % 500 == 0 { ts -= 60_000 }
            text += #"{"key": "k\#(next() % UInt64(keys))", "v": \#(next() % 100), "ts": \#(max(0, ts))}"# + "\n"
        }
        let file = path("records.jsonl")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The output of `ops` after the records (on event time unless `eventTime` is empty), its
    /// lines without the spaces that pad them.
    private func output(_ records: String, ops: String, eventTime: String = "{ time: .ts, maxDelay: 10s }") throws
        -> [String]
    {
        let out = path("out-\(UUID().uuidString).jsonl")
        let result = try run(
            """
            source: { fixture: \(records) }
            \(eventTime.isEmpty ? "" : "eventTime: \(eventTime)")
            ops:
            \(ops.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            sink: { file: \(out) }
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        return try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// The lines grouped by their `"key"`, each key's in order.
    private func byKey(_ lines: [String]) -> [String: [String]] {
        Dictionary(grouping: lines) { line in
            guard let start = line.range(of: #""key":"#) else { return "" }
            return String(line[start.upperBound...].prefix { $0 != "," && $0 != "}" })
        }
    }

    private func assertSameByKey(
        _ ops: String, eventTime: String = "{ time: .ts, maxDelay: 10s }", count: Int = 20_000,
        keys: Int = 300, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let records = try writeRecords(count, keys: keys)
        let whole = try output(records, ops: ops, eventTime: eventTime)
        XCTAssertGreaterThan(whole.count, keys, file: file, line: line)
        let indented = ops.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
        // 1, 2 and 8 partitions on 1 and 2 threads (one partition runs on one thread either way).
        for (partitions, threads) in [(1, 1), (1, 2), (2, 1), (2, 2), (8, 1), (8, 2)] {
            let split = try output(
                records,
                ops: "- partitionBy:\n    key: .key\n    partitions: \(partitions)\n    threads: \(threads)\n"
                    + "    ops:\n\(indented)",
                eventTime: eventTime)
            XCTAssertEqual(
                split.count, whole.count, "\(partitions) partitions on \(threads) threads", file: file, line: line)
            XCTAssertTrue(
                byKey(split) == byKey(whole), "\(partitions) partitions on \(threads) threads", file: file, line: line)
        }
    }

    func testAggregateByKeyOnEventTime() throws {
        try assertSameByKey(
            "- aggregate: { by: .key, every: 1m, allowedLateness: 30s, fields: { n: count, sum: { sum: .v } } }")
    }

    func testAggregateByKeyOnEventTimeWithNoLateness() throws {
        try assertSameByKey("- aggregate: { by: .key, every: 30s, fields: { n: count, sum: { sum: .v } } }")
    }

    func testWindowInsideGroupByOnEventTime() throws {
        try assertSameByKey(
            """
            - groupBy:
                key: .key
                ops: [ { window: 2m }, { map: "{key: .[0].key, n: len(.), first: .[0].v, last: .[-1].v}" } ]
            """)
    }

    func testDedupeAndScanPerKey() throws {
        try assertSameByKey(
            """
            - map: "{key: .key, v: .v % 10}"
            - dedupe: "[.key, .v]"
            - groupBy:
                key: .key
                ops: [ { scan: { seed: { total: 0 }, accumulator: "{key: .key, total: acc.total + .v}" } } ]
            """, keys: 50)
    }

    /// Lines too large to go to a partition's thread as bytes (over 16 KB) go as objects, in the
    /// same batches as the packed ones: each key's results are still those of the run without
    /// `partitionBy`.
    func testPackedAndUnpackedElementsInOneBatchKeepEachKeysResults() throws {
        var text = ""
        for index in 0..<3000 {
            // One line in seven carries a field that makes it too large to pack.
            let pad = index % 7 == 0 ? #", "pad": "\#(String(repeating: "x", count: 17_000))""# : ""
            text += #"{"key": "k\#(index % 40)", "v": \#(index % 13), "ts": \#(index * 100)\#(pad)}"# + "\n"
        }
        let records = path("mixed.jsonl")
        try text.write(toFile: records, atomically: true, encoding: .utf8)
        let ops = "- aggregate: { by: .key, every: 1m, fields: { n: count, sum: { sum: .v }, last: { last: .v } } }"
        let whole = try output(records, ops: ops)
        XCTAssertGreaterThan(whole.count, 40)
        let split = try output(
            records,
            ops: "- partitionBy:\n    key: .key\n    partitions: 8\n    threads: 2\n    ops:\n      " + ops)
        XCTAssertEqual(split.count, whole.count)
        XCTAssertTrue(byKey(split) == byKey(whole))
    }

    /// What the partitions emit goes on while a source that reads everything in one go (a file)
    /// is still reading: `take: 5` behind them ends the read early. Before, it all waited for the
    /// read's end (and was held in memory until then), so the whole file was read.
    func testPartitionsOutputGoesOnWhileAFileIsStillBeingRead() throws {
        let records = try writeRecords(400_000, keys: 100)
        let out = path("first.jsonl")
        let result = try run(
            """
            source: { fixture: \(records) }
            ops:
              - partitionBy: { key: .key, partitions: 2, threads: 2, ops: [ { map: "{key: .key, v: .v}" } ] }
              - take: 5
            sink: { file: \(out) }
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").count, 5)
        let read = result.stderr.firstMatch(of: /([0-9]+) elements read/).flatMap { Int($0.1) }
        XCTAssertNotNil(read, result.stderr)
        XCTAssertLessThan(read ?? .max, 400_000, result.stderr)
    }

    /// The names of process `pid`'s threads that run partitions (`partition-N`).
    private func partitionThreads(of pid: pid_t) -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return Set(
            tasks.compactMap { task in
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }.filter { $0.hasPrefix("partition-") })
    }

    /// An `aggregate` by key written on its own runs split by its key over every core in a real
    /// run, as inside `partitionBy`: each key's rows are those of one thread (`parallel: 1`, which
    /// starts no partition thread). The input comes on standard input, so the run is still going
    /// while its threads are looked at.
    func testAnAggregateByKeyRunsOnEveryCoreByDefault() throws {
        guard ProcessInfo.processInfo.activeProcessorCount > 1 else { throw XCTSkip("one core: nothing to split over") }
        let records = try Data(contentsOf: URL(fileURLWithPath: try writeRecords(20_000, keys: 300)))
        func run(_ parallel: String) throws -> (threads: Set<String>, lines: [String]) {
            let out = path("default-\(UUID().uuidString).jsonl")
            let file = path("default-\(UUID().uuidString).yaml")
            try """
            \(parallel)source: { stdin: jsonl }
            eventTime: { time: .ts, maxDelay: 10s }
            ops:
              - aggregate: { by: .key, every: 1m, fields: { n: count, sum: { sum: .v } } }
            sink: { file: \(out) }
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let process = try startRivulet(["run", file], input: .pipe, output: .null, error: .null)
            // More than a pipe holds: once written, the run has read most of it and started.
            FileHandle(fileDescriptor: process.standardInput, closeOnDealloc: false).write(records)
            var threads = partitionThreads(of: process.pid)
            let deadline = Date().addingTimeInterval(10)
            while parallel.isEmpty && threads.count < min(ProcessInfo.processInfo.activeProcessorCount, 16)
                && Date() < deadline
            {
                Thread.sleep(forTimeInterval: 0.05)
                threads = partitionThreads(of: process.pid)
            }
            process.closeInput()
            XCTAssertEqual(process.wait(), .exited(0))
            let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map(String.init)
            return (threads, lines)
        }
        let split = try run("")
        let one = try run("parallel: 1\n")
        // `threads: auto`: one a core, at most one a partition.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        XCTAssertEqual(split.threads, Set((0..<min(cores, 16)).map { "partition-\($0)" }))
        XCTAssertEqual(one.threads, [])
        XCTAssertGreaterThan(one.lines.count, 300)
        XCTAssertEqual(split.lines.count, one.lines.count)
        XCTAssertTrue(split.lines == one.lines, "the same lines in the same order")
    }

    /// How a run is run never changes what it writes: an aggregate by key on event time gives the
    /// same bytes on one thread (`parallel: 1`), split over the cores (the default), watched
    /// (`--metrics`, `--ui`: run as written) and inside a `partitionBy` of 8 partitions on 2
    /// threads or on the pipeline's own — windows in order, each window's keys in the one-thread
    /// order. (Split, the output came partition by partition.)
    func testOneThreadSplitAndWatchedRunsWriteTheSameBytes() throws {
        let records = try writeRecords(40_000, keys: 1_000)
        let aggregate = "aggregate: { by: .key, every: 1m, fields: { n: count, sum: { sum: .v }, last: { last: .v } } }"
        func bytes(_ header: String, _ ops: String, _ arguments: [String] = []) throws -> Data {
            let out = path("bytes-\(UUID().uuidString).jsonl")
            let result = try run(
                """
                \(header)source: { fixture: \(records) }
                eventTime: { time: .ts, maxDelay: 10s }
                ops:
                \(ops)
                sink: { file: \(out) }
                """, arguments)
            XCTAssertEqual(result.status, 0, "\(header)\(ops) \(arguments): \(result.stderr)")
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let one = try bytes("parallel: 1\n", "  - \(aggregate)")
        XCTAssertGreaterThan(one.count, 100_000)
        XCTAssertEqual(try bytes("", "  - \(aggregate)"), one, "split over the cores")
        XCTAssertEqual(try bytes("", "  - \(aggregate)", ["--metrics", "127.0.0.1:0"]), one, "--metrics")
        XCTAssertEqual(try bytes("", "  - \(aggregate)", ["--ui", "127.0.0.1:0"]), one, "--ui")
        let partitioned =
            "  - partitionBy:\n      key: .key\n      partitions: 8\n      threads: 2\n      ops:\n        - \(aggregate)"
        XCTAssertEqual(try bytes("", partitioned), one, "partitionBy on two threads")
        let inline = partitioned.replacingOccurrences(of: "threads: 2", with: "threads: 1")
        XCTAssertEqual(try bytes("", inline), one, "partitionBy on the pipeline's thread")
        XCTAssertEqual(try bytes("", inline, ["--clock", "virtual"]), one, "and on the virtual clock")
        XCTAssertEqual(
            try bytes("", partitioned + "\n        - map: \"{key: .key, n: .n}\""),
            try bytes("parallel: 1\n", "  - \(aggregate)\n  - map: \"{key: .key, n: .n}\""),
            "and with a map after the aggregate")
    }

    /// `rivulet graph` says where an aggregate by key is split over the cores (on event time,
    /// without allowedLateness), and not with `parallel: 1`.
    func testGraphShowsAnAggregateByKeySplitOverTheCores() throws {
        let pipeline = """
            source: { stdin: jsonl }
            eventTime: { time: .ts }
            ops:
              - aggregate: { by: .key, every: 1m, fields: { n: count } }
              - aggregate: { every: 1m, fields: { keys: count } }
              - aggregate: { by: .key, every: 1m, allowedLateness: 1m, fields: { n: count } }
            sink: stdout
            """
        let file = path("graph.yaml")
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        let graph = try runRivulet(["graph", file])
        XCTAssertEqual(graph.status, 0, graph.stderr)
        XCTAssertTrue(
            graph.stdout.contains(
                """
                  → aggregate {by: .key, every: 1m, fields: {n: count}}
                      split by .key: 16 partitions on every core when run (one thread with parallel: 1 or --state)
                  → aggregate {every: 1m, fields: {keys: count}}
                  → aggregate {by: .key, every: 1m, allowedLateness: 1m, fi...
                  ⇒ stdout
                """), graph.stdout)
        // Windows on the run's clock, or updated by late elements: results whose order the split
        // could not keep run as written.
        try pipeline.replacingOccurrences(of: "eventTime: { time: .ts }\n", with: "").write(
            toFile: file, atomically: true, encoding: .utf8)
        let runClock = try runRivulet(["graph", file])
        XCTAssertFalse(runClock.stdout.contains("split by"), runClock.stdout)
        try ("parallel: 1\n" + pipeline).write(toFile: file, atomically: true, encoding: .utf8)
        let one = try runRivulet(["graph", file])
        XCTAssertFalse(one.stdout.contains("split by"), one.stdout)
    }

    /// One plan: `rivulet graph` prints the split of an aggregate by key, `rivulet run` runs it
    /// split over the cores and `rivulet test` compiles the same plan on its virtual clock (where
    /// the split runs on one thread): the test, expecting what the run wrote, passes.
    func testGraphRunAndTestShareThePlanOfAnAggregateSplitByKey() throws {
        let records = try writeRecords(3_000, keys: 40)
        let out = path("plan.jsonl")
        let file = path("plan.yaml")
        try """
        source: { fixture: \(records) }
        eventTime: { time: .ts, maxDelay: 10s }
        ops:
          - aggregate: { by: .key, every: 1m, fields: { n: count, sum: { sum: .v } } }
        sink: { file: \(out) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let graph = try runRivulet(["graph", file])
        assertContains(graph.stdout, "split by .key: 16 partitions on every core when run")
        let run = try runRivulet(["run", file])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 100)
        try """
        pipeline: plan.yaml
        tests:
          - name: the split run's rows
            expectCount: \(lines.count)
            expectContains: [\(lines.joined(separator: ", "))]
        """.write(toFile: path("plan.test.yaml"), atomically: true, encoding: .utf8)
        let tested = try runRivulet(["test", path("plan.test.yaml")])
        XCTAssertEqual(tested.status, 0, tested.stdout + tested.stderr)
        assertContains(tested.stdout, "1 passed, 0 failed")
    }

    func testDistinctUntilChangedPerKeyWithoutEventTime() throws {
        try assertSameByKey(
            """
            - map: "{key: .key, even: .v % 2 == 0}"
            - groupBy: { key: .key, ops: [ { distinctUntilChanged: .even } ] }
            """, eventTime: "", keys: 40)
    }
}

/// The example of docs/pipelines.md's `partitionBy` section, run as written.
final class PartitionDocsTests: BinaryTestCase {
    func testTheDocsExampleRunsAndCountsEachCustomerOnce() throws {
        let docs = Repository.root.appendingPathComponent("docs/pipelines.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let section = try XCTUnwrap(text.range(of: "## Keyed state on several cores: `partitionBy`"))
        let block = try XCTUnwrap(text[section.upperBound...].range(of: "```yaml\n"))
        let end = try XCTUnwrap(text[block.upperBound...].range(of: "```"))
        let pipeline = String(text[block.upperBound..<end.lowerBound])
        var orders = ""
        for index in 0..<3000 {
            orders += #"{"customer": "c\#(index % 37)", "amount": \#(index % 10), "ts": \#(index * 100)}"# + "\n"
        }
        try orders.write(to: directory.appendingPathComponent("orders.jsonl"), atomically: true, encoding: .utf8)
        let file = directory.appendingPathComponent("orders.yaml")
        try pipeline.write(to: file, atomically: true, encoding: .utf8)
        let lint = try runRivulet(["lint", file.path])
        XCTAssertEqual(lint.status, 0, lint.stdout + lint.stderr)
        let result = try runRivulet(["run", file.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let rows = try String(
            contentsOf: directory.appendingPathComponent("per-customer.jsonl"), encoding: .utf8
        ).split(separator: "\n")
        // 300 s of orders: 5 one-minute windows, each with every one of the 37 customers.
        XCTAssertEqual(rows.count, 5 * 37)
    }
}

/// `partitionBy` under `--state`: a followed file appended to while runs on two threads and on
/// one are killed with SIGKILL at random gives what one uninterrupted run gives.
final class PartitionCheckpointTests: BinaryTestCase {
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func pipeline(source: String, threads: Int) -> String {
        """
        name: per-key
        source: \(source)
        eventTime: { time: .ts, maxDelay: 5s }
        ops:
          - take: 60000
          - partitionBy:
              key: .key
              partitions: 8
              threads: \(threads)
              ops:
                - aggregate: { by: .key, every: 10s, fields: { n: count, sum: { sum: .v } } }
        sink: { file: out.jsonl }
        """
    }

    /// The lines of out.jsonl, sorted.
    private func output() throws -> [String] {
        try String(contentsOfFile: path("out.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init).sorted()
    }

    func testKilledRunsOnTwoThreadsAndOnOneResumeEachOthersCheckpoints() throws {
        var all = ""
        // 500 more than the runs take, so that the watermark passes the 60,000th.
        for index in 0..<60_500 {
            let disorder = index % 17 == 0 ? 3_000 : 0
            all +=
                #"{"key": "k\#(index * 7 % 101)", "v": \#(index % 13), "ts": \#(max(0, index * 20 - disorder))}"# + "\n"
        }
        try all.write(toFile: path("all.jsonl"), atomically: true, encoding: .utf8)
        try pipeline(source: "{ fixture: all.jsonl }", threads: 1).write(
            toFile: path("whole.yaml"), atomically: true, encoding: .utf8)
        let whole = try runRivulet(["run", path("whole.yaml")])
        XCTAssertEqual(whole.status, 0, whole.stderr)
        let expected = try output()
        XCTAssertGreaterThan(expected.count, 5_000)
        try FileManager.default.removeItem(atPath: path("out.jsonl"))
        try FileManager.default.createDirectory(atPath: path("logs"), withIntermediateDirectories: true)
        let follow = "{ file: { path: logs/app.jsonl, follow: true, poll: 10ms } }"
        for threads in [1, 2] {
            try pipeline(source: follow, threads: threads).write(
                toFile: path("follow-\(threads).yaml"), atomically: true, encoding: .utf8)
        }
        let bytes = Array(all.utf8)
        let logs = path("logs")
        let writer = Thread {
            let descriptor = open(logs + "/app.jsonl", O_WRONLY | O_CREAT | O_APPEND, 0o644)
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + Int.random(in: 20_000...60_000))
                bytes[offset..<end].withUnsafeBytes { _ = Glibc.write(descriptor, $0.baseAddress, $0.count) }
                offset = end
                usleep(useconds_t.random(in: 20_000...60_000))
            }
            close(descriptor)
        }
        writer.start()
        var killed = 0
        let state = ["--state", path("s.db"), "--checkpoint-interval", "20ms"]
        while killed < 8 {
            let process = try startRivulet(
                ["run", path("follow-\(killed % 2 == 0 ? 2 : 1).yaml")] + state, output: .null, error: .null)
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...0.5))
            process.send(SIGKILL)
            guard process.wait() == .signalled(SIGKILL) else { break }
            killed += 1
        }
        while writer.isExecuting { Thread.sleep(forTimeInterval: 0.05) }
        let last = try runRivulet(["run", path("follow-1.yaml")] + state, timeout: 300)
        XCTAssertEqual(last.status, 0, last.stderr)
        XCTAssertGreaterThan(killed, 3)
        let resumed = try output()
        XCTAssertEqual(resumed.count, expected.count, "\(killed) kills")
        XCTAssertTrue(resumed == expected, "every window's row once (\(killed) kills)")
    }
}

/// A run on threads that ends while a checkpoint has them paused (an element the checkpoint passed
/// on fails the run, or completes it) ends; it does not wait for a resume.
final class PartitionStopTests: BinaryTestCase {
    func testAFailureOrTheEndReachedDuringACheckpointEndsTheRun() throws {
        var records = ""
        for index in 0..<20_000 {
            records += #"{"key": "k\#(index % 97)", "v": \#(index == 15_000 ? "\"x\"" : String(index))}"# + "\n"
        }
        let input = directory.appendingPathComponent("in.jsonl").path
        try records.write(toFile: input, atomically: true, encoding: .utf8)
        for (after, status) in [("- map: .v * 2", Int32(1)), ("- map: .", Int32(0))] {
            for attempt in 0..<4 {
                let result = try run(
                    """
                    source: { fixture: \(input) }
                    ops:
                      - partitionBy: { key: .key, partitions: 8, threads: 2, ops: [ { map: "{key: .key, v: .v}" } ] }
                      \(after)
                    sink: { file: \(directory.appendingPathComponent("out-\(attempt).jsonl").path) }
                    """,
                    [
                        "--state", directory.appendingPathComponent("s-\(status)-\(attempt).db").path,
                        "--checkpoint-interval", "1ms",
                    ])
                XCTAssertEqual(result.status, status, "\(after), attempt \(attempt): \(result.stderr)")
            }
        }
    }
}
