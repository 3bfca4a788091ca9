/// A key-value bucket whose entries expire a fixed time after their last write, with writes that
/// succeed only if the entry is where the writer last saw it: JetStream's key-value store (see
/// `NATSLeaseBucket`), or a bucket in memory for tests.
protocol LeaseBucket {
    /// Every entry that has not expired: its value and revision.
    func entries() throws -> [String: LeaseBucketEntry]
    /// Writes `value` whatever the entry holds; its new revision.
    @discardableResult func put(_ key: String, _ value: String) throws -> UInt64
    /// Writes `value` if there is no entry (or it was deleted or expired); nil if there is one.
    func create(_ key: String, _ value: String) throws -> UInt64?
    /// Writes `value` if the entry's revision is still `expected`; nil if it has moved on.
    func update(_ key: String, _ value: String, expected: UInt64) throws -> UInt64?
    /// Removes the entry.
    func delete(_ key: String) throws
    /// The entry of `key`, or nil when there is none.
    func entry(_ key: String) throws -> LeaseBucketEntry?
}

extension LeaseBucket {
    func entry(_ key: String) throws -> LeaseBucketEntry? { try entries()[key] }
}

/// One entry of a `LeaseBucket`.
struct LeaseBucketEntry: Equatable {
    var value: String
    var revision: UInt64
    /// When it was written, in nanoseconds since the epoch (0 when not known).
    var created: Int64 = 0
}

/// A runner's leases on the partitions of its group, kept in a `LeaseBucket` (JetStream is the
/// coordinator: no process of Rivulet's own decides). Each `round` (every third of the lease
/// timeout, the bucket's time to live) renews this runner's entry `runners.NAME` and its leases
/// `partitions.P` (an update at the revision it wrote, so a lease that expired and was taken by
/// another runner is found lost, never overwritten), lets go of its surplus, and takes free
/// partitions up to its share (`PartitionAssignment`). A lease let go of is written empty at its
/// revision, so it can be taken at once; one whose runner died expires after the time to live.
final class PartitionLeases {
    /// What a round changed: the partitions taken, given up (surplus or `stop`) and lost (a
    /// lease that expired before it was renewed: another runner may read it already).
    struct Changes: Equatable {
        var acquired: [Int] = []
        var released: [Int] = []
        var lost: [Int] = []
    }

    let runner: String
    let partitions: Int
    private let bucket: any LeaseBucket
    /// The partitions this runner holds, with the revision of its last write of each.
    private(set) var held: [Int: UInt64] = [:]
    /// Called with every partition about to be let go of, before the first is handed over:
    /// stop fetching them all, so the hand-overs wait for their settlements side by side.
    private let willHandOver: ([Int]) -> Void
    /// Called before a surplus partition is let go of: stop reading it and make what was read of
    /// it safe (a checkpoint), so the next holder starts where this one ended.
    private let handOver: (Int) throws -> Void
    /// Entries written with the runner's own at each round (what describes the group).
    private let alsoKeep: [String: String]
    /// The value of the runner's own entry, given the partitions it holds (what it tells of them:
    /// their watermarks); by default its name.
    private let runnerEntry: (_ held: [Int]) -> String

    init(
        runner: String, partitions: Int, bucket: any LeaseBucket, alsoKeep: [String: String] = [:],
        handOver: @escaping (Int) throws -> Void = { _ in }, willHandOver: @escaping ([Int]) -> Void = { _ in },
        runnerEntry: ((_ held: [Int]) -> String)? = nil
    ) {
        self.runnerEntry = runnerEntry ?? { _ in runner }
        self.runner = runner
        self.partitions = partitions
        self.bucket = bucket
        self.willHandOver = willHandOver
        self.handOver = handOver
        self.alsoKeep = alsoKeep
    }

    static func runnerKey(_ runner: String) -> String { "runners.\(runner)" }
    static func partitionKey(_ partition: Int) -> String { "partitions.\(partition)" }

    /// One heartbeat: renew, let go, take.
    func round() throws -> Changes {
        var changes = Changes()
        try bucket.put(Self.runnerKey(runner), runnerEntry(held.keys.sorted()))
        for (key, value) in alsoKeep.sorted(by: { $0.key < $1.key }) { try bucket.put(key, value) }
        for (partition, revision) in held.sorted(by: { $0.key < $1.key }) {
            if let renewed = try bucket.update(Self.partitionKey(partition), runner, expected: revision) {
                held[partition] = renewed
            } else {
                held[partition] = nil
                changes.lost.append(partition)
            }
        }
        let entries = try bucket.entries()
        var runners = Set<String>()
        var owners: [Int: String] = [:]
        for (key, entry) in entries {
            if key.hasPrefix("runners.") { runners.insert(String(key.dropFirst("runners.".count))) }
            if key.hasPrefix("partitions."), let partition = Int(key.dropFirst("partitions.".count)),
                !entry.value.isEmpty
            {
                owners[partition] = entry.value
            }
        }
        // A lease that names this runner but is not held here: a write of this runner's that was
        // applied though its answer never came (a timeout on a loaded server), so the revision
        // held here was stale. Taken back at the entry's revision; left alone, the partition
        // counted as this runner's and went unread until the entry expired.
        for (partition, owner) in owners.sorted(by: { $0.key < $1.key }) where owner == runner && held[partition] == nil
        {
            guard let entry = entries[Self.partitionKey(partition)],
                let taken = try bucket.update(Self.partitionKey(partition), runner, expected: entry.revision)
            else { continue }
            held[partition] = taken
            changes.acquired.append(partition)
        }
        let plan = PartitionAssignment.next(runner: runner, partitions: partitions, runners: runners, owners: owners)
        if !plan.release.isEmpty { willHandOver(plan.release) }
        for partition in plan.release {
            try release(partition)
            changes.released.append(partition)
        }
        for partition in plan.acquire {
            let key = Self.partitionKey(partition)
            let taken: UInt64?
            if let entry = entries[key] {
                taken = try bucket.update(key, runner, expected: entry.revision)  // let go of: empty
            } else {
                taken = try bucket.create(key, runner)
            }
            if let taken {
                held[partition] = taken
                changes.acquired.append(partition)
            }
        }
        return changes
    }

    /// Lets go of every partition (after the run's last checkpoint) and leaves the group, so the
    /// other runners take the partitions at their next round instead of after the time to live.
    func stop() throws -> [Int] {
        let released = held.keys.sorted()
        if !released.isEmpty { willHandOver(released) }
        for partition in released { try release(partition) }
        try bucket.delete(Self.runnerKey(runner))
        return released
    }

    private func release(_ partition: Int) throws {
        guard let revision = held.removeValue(forKey: partition) else { return }
        try handOver(partition)
        // At the revision written: a lease that expired and was taken meanwhile is left alone.
        _ = try bucket.update(Self.partitionKey(partition), "", expected: revision)
    }
}
