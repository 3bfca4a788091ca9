import RivuletTestSupport
import XCTest

@testable import Components

/// A lease bucket in memory with JetStream's rules: revisions grow across the bucket, an entry
/// expires `timeToLive` after its last write, create fails on a live entry, update on a moved one.
final class MemoryLeaseBucket: LeaseBucket {
    private var stored: [String: (entry: LeaseBucketEntry, written: Double)] = [:]
    private var lastRevision: UInt64 = 0
    let timeToLive: Double
    var now: Double = 0

    init(timeToLive: Double) { self.timeToLive = timeToLive }

    private func live(_ key: String) -> LeaseBucketEntry? {
        guard let item = stored[key], now - item.written < timeToLive else { return nil }
        return item.entry
    }

    private func write(_ key: String, _ value: String) -> UInt64 {
        lastRevision += 1
        stored[key] = (LeaseBucketEntry(value: value, revision: lastRevision), now)
        return lastRevision
    }

    func entries() -> [String: LeaseBucketEntry] {
        var result: [String: LeaseBucketEntry] = [:]
        for key in stored.keys { if let entry = live(key) { result[key] = entry } }
        return result
    }

    func put(_ key: String, _ value: String) -> UInt64 { write(key, value) }

    func create(_ key: String, _ value: String) -> UInt64? { live(key) == nil ? write(key, value) : nil }

    func update(_ key: String, _ value: String, expected: UInt64) -> UInt64? {
        live(key)?.revision == expected ? write(key, value) : nil
    }

    func delete(_ key: String) { stored[key] = nil }

    /// Who holds each partition, by the bucket.
    func owners() -> [Int: String] {
        var owners: [Int: String] = [:]
        for (key, entry) in entries() where key.hasPrefix("partitions.") && !entry.value.isEmpty {
            owners[Int(key.dropFirst("partitions.".count))!] = entry.value
        }
        return owners
    }
}

final class PartitionAssignmentTests: LeakCheckingTestCase {
    func testSharesAreFairAndAddUpToThePartitions() {
        let runners: Set = ["a", "b", "c"]
        XCTAssertEqual(
            runners.sorted().map { PartitionAssignment.share(of: $0, among: runners, partitions: 16) }, [6, 5, 5])
        XCTAssertEqual(PartitionAssignment.share(of: "a", among: [], partitions: 16), 16, "alone: itself counts")
        XCTAssertEqual(PartitionAssignment.share(of: "z", among: ["a"], partitions: 1), 0)
    }

    func testARunnerLetsGoOfItsSurplusOnlyAndTakesFreePartitionsUpToItsShare() {
        let all = Dictionary(uniqueKeysWithValues: (0..<16).map { ($0, "a") })
        let joined = PartitionAssignment.next(runner: "a", partitions: 16, runners: ["a", "b"], owners: all)
        XCTAssertEqual(joined.release, [15, 14, 13, 12, 11, 10, 9, 8], "the highest, and no more than the surplus")
        XCTAssertEqual(joined.acquire, [])
        let newcomer = PartitionAssignment.next(runner: "b", partitions: 16, runners: ["a", "b"], owners: all)
        XCTAssertEqual(newcomer.release, [])
        XCTAssertEqual(newcomer.acquire, [], "nothing free yet: it waits")
        var half = all
        for partition in 8..<16 { half[partition] = nil }
        let taking = PartitionAssignment.next(runner: "b", partitions: 16, runners: ["a", "b"], owners: half)
        XCTAssertEqual(Set(taking.acquire), Set(8..<16))
    }
}

final class PartitionLeasesTests: LeakCheckingTestCase {
    private let timeToLive = 9.0
    private var bucket: MemoryLeaseBucket!

    override func setUp() {
        super.setUp()
        bucket = MemoryLeaseBucket(timeToLive: timeToLive)
    }

    /// Rounds for every runner, every third of the time to live, for `seconds` of bucket time.
    private func rounds(_ runners: [PartitionLeases], for seconds: Double) throws -> PartitionLeases.Changes {
        var all = PartitionLeases.Changes()
        let end = bucket.now + seconds
        while bucket.now < end {
            for runner in runners {
                let changes = try runner.round()
                all.acquired += changes.acquired
                all.released += changes.released
                all.lost += changes.lost
            }
            bucket.now += timeToLive / 3
        }
        return all
    }

    private func assertEveryPartitionHeldOnceBy(
        _ runners: [PartitionLeases], file: StaticString = #filePath, line: UInt = #line
    ) {
        var seen: [Int: String] = [:]
        for runner in runners {
            for partition in runner.held.keys {
                XCTAssertNil(seen[partition], "partition \(partition) held twice", file: file, line: line)
                seen[partition] = runner.runner
            }
        }
        XCTAssertEqual(seen, bucket.owners(), "the runners and the bucket agree", file: file, line: line)
        XCTAssertEqual(seen.count, 16, "every partition is held", file: file, line: line)
    }

    func testOneRunnerTakesEveryPartitionAndASecondTakesHalfWithTheFewestMoves() throws {
        let a = PartitionLeases(runner: "a", partitions: 16, bucket: bucket)
        _ = try rounds([a], for: 3)
        XCTAssertEqual(a.held.count, 16)
        let b = PartitionLeases(runner: "b", partitions: 16, bucket: bucket)
        let changes = try rounds([a, b], for: 12)
        assertEveryPartitionHeldOnceBy([a, b])
        XCTAssertEqual(a.held.count, 8)
        XCTAssertEqual(b.held.count, 8)
        XCTAssertEqual(changes.released.count, 8, "only the newcomer's share moved")
        XCTAssertEqual(changes.acquired.count, 8)
        XCTAssertEqual(changes.lost, [])
    }

    /// Every partition a round lets go of is announced before the first is handed over, so a
    /// runner stops fetching them all at once instead of waiting out each one's fetch in turn.
    func testEveryPartitionLetGoOfIsAnnouncedBeforeTheFirstHandOver() throws {
        var events: [String] = []
        let a = PartitionLeases(
            runner: "a", partitions: 4, bucket: bucket, handOver: { events.append("hand over \($0)") },
            willHandOver: { events.append("will hand over \($0)") })
        _ = try rounds([a], for: 3)
        let b = PartitionLeases(runner: "b", partitions: 4, bucket: bucket)
        _ = try b.round()
        _ = try a.round()
        XCTAssertEqual(events, ["will hand over [3, 2]", "hand over 3", "hand over 2"])
        events = []
        _ = try a.stop()
        XCTAssertEqual(events, ["will hand over [0, 1]", "hand over 0", "hand over 1"])
    }

    func testARunnerThatStopsHandsItsPartitionsOverAtOnceAndOneThatDiesLosesThemAfterTheTimeToLive() throws {
        var handedOver: [Int] = []
        let a = PartitionLeases(runner: "a", partitions: 16, bucket: bucket)
        let b = PartitionLeases(runner: "b", partitions: 16, bucket: bucket) { handedOver.append($0) }
        let c = PartitionLeases(runner: "c", partitions: 16, bucket: bucket)
        _ = try rounds([a, b, c], for: 15)
        assertEveryPartitionHeldOnceBy([a, b, c])
        XCTAssertEqual([a, b, c].map(\.held.count), [6, 5, 5])
        // b stops: its partitions are let go of (handed over first) and taken at the next round.
        let bHeld = Set(b.held.keys)
        XCTAssertEqual(Set(try b.stop()), bHeld)
        XCTAssertEqual(Set(handedOver), bHeld)
        _ = try rounds([a, c], for: timeToLive / 3)
        assertEveryPartitionHeldOnceBy([a, c])
        XCTAssertEqual([a, c].map(\.held.count), [8, 8])
        // c dies (no more rounds): a takes its partitions once their leases expired, not before.
        let cHeld = Set(c.held.keys)
        _ = try rounds([a], for: timeToLive - 3)
        XCTAssertEqual(a.held.count, 8, "c's leases have not expired yet")
        _ = try rounds([a], for: 6)
        XCTAssertEqual(a.held.count, 16)
        XCTAssertTrue(cHeld.isSubset(of: Set(a.held.keys)))
    }

    func testALeaseThatExpiredAndWasTakenIsFoundLostNotOverwritten() throws {
        let a = PartitionLeases(runner: "a", partitions: 4, bucket: bucket)
        let b = PartitionLeases(runner: "b", partitions: 4, bucket: bucket)
        _ = try a.round()
        XCTAssertEqual(a.held.count, 4)
        // a stalls past the time to live (a long pause); b takes everything meanwhile.
        bucket.now += timeToLive + 1
        _ = try b.round()
        XCTAssertEqual(b.held.count, 4)
        let changes = try a.round()
        XCTAssertEqual(changes.lost.sorted(), [0, 1, 2, 3])
        XCTAssertEqual(b.held.count, 4)
        XCTAssertEqual(Set(bucket.owners().values), ["b"], "a never wrote over b's leases")
    }

    /// A renewal the server applied but whose answer was lost (a timeout under load) leaves the
    /// runner with a stale revision: its next round finds the lease "lost", sees that the entry
    /// still names it, and takes it back at once instead of leaving the partition unread until
    /// the entry expires.
    func testARenewalAppliedWithoutAnAnswerIsTakenBackAtTheNextRound() throws {
        let answersLost = AnswerLosingBucket(bucket)
        let a = PartitionLeases(runner: "a", partitions: 4, bucket: answersLost)
        _ = try a.round()
        XCTAssertEqual(a.held.count, 4)
        bucket.now += timeToLive / 3
        answersLost.loseTheNextUpdatesAnswer = true
        XCTAssertThrowsError(try a.round(), "the renewal of partition 0 timed out")
        bucket.now += timeToLive / 3
        let changes = try a.round()
        XCTAssertEqual(changes.lost, [0], "its revision had moved on")
        XCTAssertEqual(changes.acquired, [0], "taken back in the same round")
        XCTAssertEqual(a.held.count, 4)
        XCTAssertEqual(Set(bucket.owners().values), ["a"])
    }

    /// Runners join, stop and die at random; after each change and a few rounds every partition is
    /// held by exactly one live runner, by shares that differ by one at most.
    func testRandomJoinsStopsAndDeathsAlwaysSettleOnOneHolderPerPartition() throws {
        var generator = SplitMix(seed: 7)
        var live: [PartitionLeases] = []
        var next = 0
        for _ in 0..<40 {
            let action = Int.random(in: 0..<3, using: &generator)
            if action == 0 || live.count < 2 {
                live.append(PartitionLeases(runner: "r\(next)", partitions: 16, bucket: bucket))
                next += 1
            } else if action == 1 {
                _ = try live.remove(at: Int.random(in: 0..<live.count, using: &generator)).stop()
            } else {
                live.remove(at: Int.random(in: 0..<live.count, using: &generator))  // dies
            }
            _ = try rounds(live, for: timeToLive * 2)
            assertEveryPartitionHeldOnceBy(live)
            let counts = live.map(\.held.count)
            XCTAssertLessThanOrEqual(counts.max()! - counts.min()!, 1, "\(counts)")
        }
    }
}

/// A bucket whose next update is applied but answered with an error, as a JetStream request that
/// timed out after the server had done it.
final class AnswerLosingBucket: LeaseBucket {
    private let bucket: MemoryLeaseBucket
    var loseTheNextUpdatesAnswer = false

    init(_ bucket: MemoryLeaseBucket) { self.bucket = bucket }

    struct Timeout: Error {}

    func entries() -> [String: LeaseBucketEntry] { bucket.entries() }
    func put(_ key: String, _ value: String) -> UInt64 { bucket.put(key, value) }
    func create(_ key: String, _ value: String) -> UInt64? { bucket.create(key, value) }
    func update(_ key: String, _ value: String, expected: UInt64) throws -> UInt64? {
        let revision = bucket.update(key, value, expected: expected)
        if loseTheNextUpdatesAnswer {
            loseTheNextUpdatesAnswer = false
            throw Timeout()
        }
        return revision
    }
    func delete(_ key: String) { bucket.delete(key) }
}
