import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

@testable import Components

/// What a runner reads from a store is input. From a group's state bucket: an entry that is not
/// JSON, or whose floor is out of range, is refused with a message naming it, and the runner goes
/// on with its other partitions. From its own SQLite file: a damaged position is refused naming
/// its consumer, and the run does not start. (A negative floor, or one at its maximum, crashed every runner that took
/// the partition, again on each restart; an entry that was not JSON was read as an empty state.)
final class NATSStoredStateTests: OneNATSServerTestCase {
    private func publish(_ ids: Range<Int>) throws {
        let lines = ids.map { "{\"id\":\($0),\"key\":\"k\($0)\"}" }.joined(separator: "\n")
        try (lines + "\n").write(toFile: path("events.jsonl"), atomically: true, encoding: .utf8)
        let published = try run(
            """
            source: { fixture: \(path("events.jsonl")) }
            sink: { nats: { url: "\(natsURL)", subject: events, partitionBy: .key, partitions: 4, msgId: "{{ .id }}", stream: EVENTS } }
            """)
        XCTAssertEqual(published.status, 0, published.stderr)
    }

    private func startRunner() throws -> ChildProcess {
        let file = path("runner.yaml")
        try """
        source: { nats: { url: "\(natsURL)", stream: EVENTS, subject: events, group: g, partitions: 4, leaseTimeout: 2s, create: true } }
        ops:
          - partitionBy: { key: .key, partitions: 4, ops: [{ map: { id: .id } }] }
        sink: { file: \(path("out.jsonl")) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return try startRivulet(
            ["run", file, "--state", path("runner.db"), "--checkpoint-interval", "200ms"], output: .null, error: .pipe)
    }

    func testABadPartitionEntryIsRefusedByNameAndCrashesNoRunner() throws {
        let first = try startRunner()
        Thread.sleep(forTimeInterval: 3)  // the stream, the buckets and the four partitions' leases
        try publish(0..<40)
        waitForLines("out.jsonl", atLeast: 40)
        let (stopped, firstErrors) = stop(first)
        XCTAssertEqual(stopped, 143, firstErrors)
        XCTAssertEqual(Set(ids("out.jsonl")), Set(0..<40), firstErrors)

        // Written by hand, or by another program: three bad entries, one left as it was.
        let connection = try NATSConnection(
            NATSEndpoint(urls: [server.url], lostAfter: .seconds(10)), name: "bucket test", report: { _ in })
        defer { connection.close() }
        let bucket = try NATSLeaseBucket(name: "rivulet-state-g", timeToLive: .zero, js: connection.jetStream!)
        let stored = try bucket.entries()
        XCTAssertEqual(Set(stored.keys.filter { $0.hasPrefix("partitions.") }).count, 4, "\(stored.keys)")
        _ = try bucket.put("partitions.0", "{\"owner\": \"x\", \"state\": {}, \"pos")
        _ = try bucket.put("partitions.1", #"{"owner":"x","state":{},"position":{"floor":-5,"sequences":[]}}"#)
        _ = try bucket.put(
            "partitions.2", #"{"owner":"x","state":{},"position":{"floor":9223372036854775807,"sequences":[]}}"#)

        try publish(40..<80)
        let second = try startRunner()
        Thread.sleep(forTimeInterval: 8)  // several lease rounds, each trying the refused partitions again
        XCTAssertNil(second.exited(), "the runner is still up")
        let (status, errors) = stop(second)
        XCTAssertEqual(status, 143, errors)
        assertContains(
            errors,
            "the entry 'partitions.0' of bucket 'rivulet-state-g' is not JSON",
            "the entry 'partitions.1' of bucket 'rivulet-state-g' has the floor -5, not a sequence from 0 to 9223372036854775806",
            "the entry 'partitions.2' of bucket 'rivulet-state-g' has the floor 9223372036854775807",
            "fix or delete it to read partition 0 again")
        XCTAssertFalse(errors.contains("Fatal error"), errors)
        // Partition 3 was read on; the refused ones were left where they were, nothing read twice.
        let read = ids("out.jsonl")
        XCTAssertEqual(read.count, Set(read).count, "nothing twice")
        let new = Set(read).subtracting(0..<40)
        XCTAssertFalse(new.isEmpty, errors)
        XCTAssertLessThan(new.count, 40, "the refused partitions' messages wait")
    }

    func testADamagedPositionInTheRunnersOwnStateFileIsRefusedByName() throws {
        try """
        name: reader
        source: { nats: { url: "\(natsURL)", stream: EVENTS, subject: "events.>", durable: reader, create: true } }
        ops: [{ map: { id: .id } }]
        sink: { file: \(path("read.jsonl")) }
        """.write(toFile: path("reader.yaml"), atomically: true, encoding: .utf8)
        func startReader() throws -> ChildProcess {
            try startRivulet(
                ["run", path("reader.yaml"), "--state", path("reader.db"), "--checkpoint-interval", "200ms"],
                output: .null, error: .pipe)
        }
        let first = try startReader()
        Thread.sleep(forTimeInterval: 2)  // the stream and the consumer
        try publish(0..<20)
        waitForLines("read.jsonl", atLeast: 20)
        let (stopped, firstErrors) = stop(first)
        XCTAssertEqual(stopped, 143, firstErrors)

        // The runner's SQLite file, edited by hand: the consumer's floor made negative (it was
        // read as 0, and the stream read again from its start).
        func sqlite(_ sql: String) throws -> String {
            let process = try ChildProcess(executable: "sqlite3", arguments: [path("reader.db"), sql], input: .null)
            return String(decoding: process.communicate(timeout: 30).standardOutput, as: UTF8.self)
        }
        let state = try sqlite("SELECT state FROM checkpoints WHERE pipeline = 'reader'")
        let floor = try XCTUnwrap(state.range(of: #""floor":[0-9]+"#, options: .regularExpression), state)
        let damaged = state.replacingCharacters(in: floor, with: #""floor":-5"#)
            .trimmingCharacters(in: .newlines).replacingOccurrences(of: "'", with: "''")
        _ = try sqlite("UPDATE checkpoints SET state = '\(damaged)' WHERE pipeline = 'reader'")

        let refused = try startReader().communicate(timeout: 30)
        let errors = String(decoding: refused.standardError, as: UTF8.self)
        XCTAssertEqual(refused.termination, .exited(1), errors)
        assertContains(
            errors, "the checkpoint's position of consumer 'reader' has the floor -5, not a sequence from 0 to",
            "reset the pipeline's checkpoint to start over")
        XCTAssertFalse(errors.contains("Fatal error"), errors)
        XCTAssertEqual(ids("read.jsonl"), Array(0..<20), "nothing read again")

        let reset = try runRivulet(["state", path("reader.db"), "--reset", "reader"])
        XCTAssertEqual(reset.status, 0, reset.stderr)
        try publish(20..<30)
        let again = try startReader()
        waitForLines("read.jsonl", atLeast: 30)
        let (status, againErrors) = stop(again)
        XCTAssertEqual(status, 143, againErrors)
        // The stopped run acknowledged what its last checkpoint held, so the server has the
        // consumer past 20: the fresh run (a new file, `mode: overwrite`) reads on from there.
        XCTAssertEqual(
            ids("read.jsonl").sorted(), Array(20..<30), "after a reset the consumer goes on where the server has it")
    }

    /// A SIGTERM under --state takes a last checkpoint and acknowledges what it holds: with no
    /// periodic checkpoint before it (an hour apart), the server has nothing left unacknowledged.
    /// (Those messages were sent back once, so the server's state after a stop hung on timing.)
    func testAStoppedRunAcknowledgesWhatItsLastCheckpointHolds() throws {
        try """
        name: stopped
        source: { nats: { url: "\(natsURL)", stream: EVENTS, subject: "events.>", durable: stopped, create: true } }
        sink: { file: \(path("stopped.jsonl")) }
        """.write(toFile: path("stopped.yaml"), atomically: true, encoding: .utf8)
        let runner = try startRivulet(
            ["run", path("stopped.yaml"), "--state", path("stopped.db"), "--checkpoint-interval", "1h"],
            output: .null, error: .pipe)
        Thread.sleep(forTimeInterval: 2)  // the stream and the consumer
        try publish(0..<5)
        waitForLines("stopped.jsonl", atLeast: 5)
        let (status, errors) = stop(runner)
        XCTAssertEqual(status, 143, errors)
        let listed = try runRivulet(["nats", "list", "--nats", natsURL])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let row = listed.stdout.split(separator: "\n").first { $0.hasPrefix("stopped ") }
        XCTAssertEqual(
            row?.split(separator: " ").map(String.init), ["stopped", "EVENTS", "0", "0"],
            "no message pending or unacknowledged:\n\(listed.stdout)")
    }

    func testAPartitionStateLargerThanTheServerTakesFailsTheRunAndLosesNothing() throws {
        // A partition's entry too large to store: it was dropped while its messages were
        // acknowledged (a count of 4 where 5 came). Here a dedupe's state outgrows 8 KB.
        let store = directory.appendingPathComponent("js").path
        func restartServer(maxPayload: Int?) throws {
            server.stop()
            var arguments = ["-js", "-a", "127.0.0.1", "-p", "-1", "-sd", store]
            if let maxPayload {
                try "max_payload: \(maxPayload)\n".write(toFile: path("server.conf"), atomically: true, encoding: .utf8)
                arguments += ["-c", path("server.conf")]
            }
            server = try NATSServer(arguments: arguments)
        }
        try restartServer(maxPayload: 8192)
        func startCounter() throws -> ChildProcess {
            try """
            source: { nats: { url: "\(natsURL)", stream: EVENTS, subject: events, group: g, partitions: 4, leaseTimeout: 2s, create: true } }
            ops:
              - partitionBy:
                  { key: .key, partitions: 4, ops: [{ dedupe: { key: .pad } }, { map: { id: .id } }] }
            sink: { file: \(path("out.jsonl")) }
            """.write(toFile: path("counter.yaml"), atomically: true, encoding: .utf8)
            return try startRivulet(
                ["run", path("counter.yaml"), "--state", path("counter.db"), "--checkpoint-interval", "200ms"],
                output: .null, error: .pipe)
        }
        func publish(_ ids: Range<Int>) throws {
            let pad = String(repeating: "x", count: 1000)
            let lines = ids.map { "{\"id\":\($0),\"key\":\"k\",\"pad\":\"\($0)-\(pad)\"}" }.joined(separator: "\n")
            try (lines + "\n").write(toFile: path("events.jsonl"), atomically: true, encoding: .utf8)
            let published = try run(
                """
                source: { fixture: { path: \(path("events.jsonl")), every: 300ms } }
                sink: { nats: { url: "\(natsURL)", subject: events, partitionBy: .key, partitions: 4, msgId: "{{ .id }}", stream: EVENTS } }
                """)
            XCTAssertEqual(published.status, 0, published.stderr)
        }
        let first = try startCounter()
        Thread.sleep(forTimeInterval: 3)
        try publish(0..<12)
        let failed = first.communicate(timeout: 30)
        let errors = String(decoding: failed.standardError, as: UTF8.self)
        XCTAssertEqual(failed.termination, .exited(1), errors)
        assertContains(
            errors, "of group 'g': its state is ",
            " bytes, more than the server takes in one entry of bucket 'rivulet-state-g'",
            "raise the server's max_payload")
        XCTAssertFalse(errors.contains("Fatal error"), errors)

        // The same stored state, a server that takes it: what the failed checkpoint held was not
        // acknowledged, so it comes again, and the sink's file was cut back to the last checkpoint.
        try restartServer(maxPayload: nil)
        let second = try startCounter()
        let deadline = Date(timeIntervalSinceNow: 30)
        while ids("out.jsonl").count < 12, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        Thread.sleep(forTimeInterval: 1)
        let (status, secondErrors) = stop(second)
        XCTAssertEqual(status, 143, secondErrors)
        XCTAssertEqual(ids("out.jsonl"), Array(0..<12), "each message written once: " + errors + secondErrors)
    }
}
