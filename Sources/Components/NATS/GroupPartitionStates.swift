import Foundation
import Pipeline
import Reactive

/// The state of a group's partitions under `--state`, kept in JetStream so that it moves with
/// its partition from runner to runner (Kafka Streams' state stores, on NATS).
///
/// Each partition's state is the state of its chain in `partitionBy` (whose partition `P` takes
/// the messages of `subject.P`) and its consumer's position (`NATSCoverage`), committed together
/// at each checkpoint into the key-value bucket `rivulet-state-GROUP`, key `partitions.P`, with a
/// compare-and-set on the entry's revision. A runner that takes a partition over restores both,
/// and claims the entry first (writes it again), so that a runner that lost the partition without
/// knowing (stalled past its lease) fails its next write of it and stores nothing more of it.
/// The runner's own `--state` file keeps the rest (sinks, operators outside `partitionBy`).
///
/// Every method but `claim` (and setting `store`) runs on the pipeline's thread.
final class GroupPartitionStates: @unchecked Sendable {
    let group: String
    let partitions: Int
    private let checkpoints: Checkpoints
    /// The `nats` source's key in a snapshot, where its consumers' positions are.
    private let sourceKey: String
    /// This runner's name, written with the partitions it stores.
    let runner: String
    private let lock = NSLock()
    private var boundStore: (any LeaseBucket)?
    /// The positions of the source's consumers (one a partition).
    var positions: NATSPositions?
    /// The partitions this runner holds, with the revision of their entry it wrote last.
    private var held: [Int: UInt64] = [:]
    /// `partitionBy`'s chains: each builds partition `P`'s chain again from a state.
    private var chainSets: [PartitionChainSet] = []
    /// Stops reading a partition whose state could not be stored (the next lease round reads it
    /// again from what is stored), set by the group's reading.
    var stopReading: (@Sendable (Int) -> Void)?
    /// Says a line to the user.
    var report: @Sendable (String) -> Void = { _ in }

    init(group: String, partitions: Int, checkpoints: Checkpoints, sourceKey: String) {
        self.group = group
        self.partitions = partitions
        self.checkpoints = checkpoints
        self.sourceKey = sourceKey
        runner = NATSPartitionedReading.runnerName()
        checkpoints.beforeCommit { [weak self] snapshot in self?.store(&snapshot) }
    }

    /// The key-value bucket of a group's partition state.
    static func bucketName(_ group: String) -> String { "rivulet-state-\(group)" }

    /// A partition's key in the bucket.
    static func key(_ partition: Int) -> String { "partitions.\(partition)" }

    /// The durable consumer that reads `partition`.
    func consumerName(_ partition: Int) -> String { "\(group)-p\(partition)" }

    /// The bucket, once the group's lease thread opened it.
    var store: (any LeaseBucket)? {
        get { lock.withLock { boundStore } }
        set { lock.withLock { boundStore = newValue } }
    }

    /// Has `partitionBy`'s chains keep their state per partition of the group.
    func attach(_ chains: PartitionChainSet) {
        chainSets.removeAll { $0.prefix == chains.prefix }
        chainSets.append(chains)
    }

    /// The partition of the message being delivered, if it comes from this group's source.
    static func partitionOfCurrentMessage() -> Int? {
        (Origin.current as? LanedOrigin)?.lane?.number
    }

    /// What a partition's last owner stored, claimed for this runner (on the lease thread, before
    /// its reader starts): the entry is written again, so the revision a stale owner would write
    /// over is gone. Throws when the bucket cannot be read or written (the next round tries again).
    func claim(_ partition: Int) throws -> (state: JSONObject, position: Value?, revision: UInt64) {
        guard let store else { throw NATSSetupError("the state bucket of group '\(group)' is not open") }
        let key = Self.key(partition)
        for _ in 0..<5 {
            let entry = try store.entry(key)
            let stored = entry.flatMap { try? JSONParser.parse($0.value) } ?? .null
            var claimed = stored.objectValue ?? JSONObject()
            claimed["owner"] = .string(runner)
            let text = JSONSerializer.string(.object(claimed))
            let revision =
                if let entry {
                    try store.update(key, text, expected: entry.revision)
                } else {
                    try store.create(key, text)
                }
            if let revision {
                let position = claimed["position"].flatMap { $0 == .null ? nil : $0 }
                return (claimed["state"]?.objectValue ?? JSONObject(), position, revision)
            }
        }
        throw NATSSetupError("partition \(partition) of group '\(group)' is being claimed by another runner")
    }

    /// This runner reads `partition` from now on, from `state` (its chains are built again from
    /// it) at the entry's `revision`.
    func take(_ partition: Int, state: JSONObject, revision: UInt64) {
        held[partition] = revision
        var values: [String: Value] = [:]
        for (key, value) in state { values[key] = value }
        for chains in chainSets { chains.install(partition, values) }
    }

    /// Hands `partition` over: a checkpoint stores its state and acknowledges what that holds,
    /// then this runner forgets it.
    func handOver(_ partition: Int) {
        if held[partition] != nil { checkpoints.checkpoint() }
        letGo(partition)
    }

    /// Forgets `partition` without storing it (lost, or handed over): its chains start empty, and
    /// what its consumer had not had acknowledged goes back to the stream for the next owner.
    func letGo(_ partition: Int) {
        held[partition] = nil
        positions?.remove(consumerName(partition))
        for chains in chainSets { chains.install(partition, [:]) }
    }

    /// A checkpoint's snapshot: each held partition's chain state and position go to its entry
    /// in the bucket, compare-and-set on the revision this runner wrote last; the state of the
    /// partitions it does not hold is dropped, and the rest stays for the runner's own store.
    private func store(_ snapshot: inout JSONObject) {
        var states: [Int: JSONObject] = [:]
        for chains in chainSets {
            for key in snapshot.keys {
                guard let partition = chains.partition(ofKey: key) else { continue }
                states[partition, default: JSONObject()][key] = snapshot[key]
                snapshot[key] = nil
            }
        }
        var positionsOf: [Int: Value] = [:]
        if var source = snapshot[sourceKey]?.objectValue, var consumers = source["consumers"]?.objectValue {
            for partition in 0..<partitions {
                positionsOf[partition] = consumers[consumerName(partition)]
                consumers[consumerName(partition)] = nil
            }
            source["consumers"] = .object(consumers)
            snapshot[sourceKey] = .object(source)
        }
        guard !held.isEmpty else { return }
        guard let store else { return }
        for (partition, revision) in held.sorted(by: { $0.key < $1.key }) {
            let entry: Value = [
                "owner": .string(runner), "state": .object(states[partition] ?? JSONObject()),
                "position": positionsOf[partition] ?? .null,
            ]
            do {
                if let written = try store.update(
                    Self.key(partition), JSONSerializer.string(entry), expected: revision)
                {
                    held[partition] = written
                } else {
                    lose(partition, because: "another runner holds it now")
                }
            } catch {
                lose(partition, because: "its state could not be stored (\(error))")
            }
        }
    }

    /// A partition whose state this checkpoint could not store: what it holds is not
    /// acknowledged, its state here is dropped, and it is read again from what is stored.
    private func lose(_ partition: Int, because reason: String) {
        report("partition \(partition) of group \(group): \(reason); reading it again from its stored state")
        positions?.existing(consumerName(partition))?.abandon()
        held[partition] = nil
        stopReading?(partition)
        for chains in chainSets { chains.install(partition, [:]) }
    }
}

/// `partitionBy`'s chains in a group's runner: the prefix of their checkpoint keys, and how
/// partition `P`'s chain is built again from a state (by key), on the pipeline's thread.
final class PartitionChainSet {
    /// The `partitionBy`'s checkpoint key; partition `P`'s chain keys start with `prefix [pP] `.
    let prefix: String
    let install: (Int, [String: Value]) -> Void

    init(prefix: String, install: @escaping (Int, [String: Value]) -> Void) {
        self.prefix = prefix
        self.install = install
    }

    /// The start of partition `partition`'s chain keys.
    static func keyPrefix(_ prefix: String, partition: Int) -> String { "\(prefix) [p\(partition)]" }

    /// The partition whose chain `key` belongs to, if it does.
    func partition(ofKey key: String) -> Int? {
        let start = "\(prefix) [p"
        guard key.hasPrefix(start) else { return nil }
        let digits = key.dropFirst(start.count).prefix(while: \.isNumber)
        guard !digits.isEmpty, key.dropFirst(start.count + digits.count).hasPrefix("]") else { return nil }
        return Int(digits)
    }
}
