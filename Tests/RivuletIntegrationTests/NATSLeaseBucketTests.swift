import BinaryTestSupport
import Foundation
import XCTest

@testable import Components

/// Partition leases kept in a real nats-server's key-value store: the server does the
/// compare-and-set and the expiry that `PartitionLeases` relies on.
final class NATSLeaseBucketTests: OneNATSServerTestCase {
    private func connect() throws -> NATSConnection {
        try NATSConnection(
            NATSEndpoint(urls: [server.url], lostAfter: .seconds(10)), name: "lease test", report: { _ in })
    }

    func testCreateAndUpdateAreCompareAndSetAndEntriesExpireAfterTheTimeToLive() throws {
        let connection = try connect()
        defer { connection.close() }
        let bucket = try NATSLeaseBucket(name: "leases", timeToLive: .seconds(2), js: connection.jetStream!)
        XCTAssertEqual(try bucket.entries(), [:])
        let first = try XCTUnwrap(try bucket.create("partitions.0", "a"))
        XCTAssertNil(try bucket.create("partitions.0", "b"), "a live entry cannot be created again")
        XCTAssertNil(try bucket.update("partitions.0", "b", expected: first + 100), "not at its revision")
        let second = try XCTUnwrap(try bucket.update("partitions.0", "a", expected: first))
        XCTAssertGreaterThan(second, first)
        let before = Int64(Date().timeIntervalSince1970 * 1e9) - 1_000_000_000
        _ = try bucket.put("runners.a", "a")
        let entries = try bucket.entries()
        XCTAssertEqual(
            entries.mapValues { LeaseBucketEntry(value: $0.value, revision: $0.revision) },
            [
                "partitions.0": LeaseBucketEntry(value: "a", revision: second),
                "runners.a": LeaseBucketEntry(value: "a", revision: second + 1),
            ])
        XCTAssertTrue(entries.values.allSatisfy { $0.created > before }, "each says when it was written")
        // A second binding finds the bucket as it is (the first runner made it).
        let again = try NATSLeaseBucket(name: "leases", timeToLive: .seconds(2), js: connection.jetStream!)
        XCTAssertEqual(try again.entries().count, 2)
        // Not written for longer than the time to live: gone, and free to create.
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline, !(try bucket.entries().isEmpty) { Thread.sleep(forTimeInterval: 0.2) }
        XCTAssertEqual(try bucket.entries(), [:])
        XCTAssertNotNil(try bucket.create("partitions.0", "b"), "an expired lease can be taken")
        try bucket.delete("partitions.0")
        XCTAssertNotNil(try bucket.create("partitions.0", "c"), "a deleted entry can be created again")
    }

    func testThreeRunnersDivideSixteenPartitionsAndTakeOverADeadOnesAfterItsLeasesExpire() throws {
        let connections = try (0..<3).map { _ in try connect() }
        defer { for connection in connections { connection.close() } }
        let leases = try connections.enumerated().map { index, connection in
            PartitionLeases(
                runner: "runner\(index)", partitions: 16,
                bucket: try NATSLeaseBucket(name: "group-orders", timeToLive: .seconds(3), js: connection.jetStream!))
        }
        for _ in 0..<4 { for runner in leases { _ = try runner.round() } }
        XCTAssertEqual(leases.map(\.held.count), [6, 5, 5])
        XCTAssertEqual(Set(leases.flatMap(\.held.keys)).count, 16, "each partition held once")
        // runner2 dies: runner0 and runner1 take its partitions once its leases expired.
        let dead = Set(leases[2].held.keys)
        let deadline = Date(timeIntervalSinceNow: 15)
        while Date() < deadline, leases[0].held.count + leases[1].held.count < 16 {
            for runner in leases.prefix(2) { _ = try runner.round() }
            Thread.sleep(forTimeInterval: 0.5)
        }
        XCTAssertEqual(leases.prefix(2).map(\.held.count), [8, 8])
        XCTAssertTrue(dead.isSubset(of: Set(leases.prefix(2).flatMap(\.held.keys))))
        // runner1 stops: its partitions are free at once for runner0's next round.
        _ = try leases[1].stop()
        _ = try leases[0].round()
        XCTAssertEqual(leases[0].held.count, 16)
    }
}
