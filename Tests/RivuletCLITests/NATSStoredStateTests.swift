import Foundation
import RivuletTestSupport
import XCTest

@testable import Components

/// What a runner of a group reads from its state bucket is input: an entry that is not JSON, or
/// whose floor is out of range, is refused with a message naming it, and the runner goes on with
/// its other partitions. (A negative floor, or one at its maximum, crashed every runner that took
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
}
