import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

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
    /// The consumer this runner reads each held partition through (made when it took it).
    private var consumers: [Int: String] = [:]
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
        checkpoints.beforeCommit { [weak self] snapshot in try self?.store(&snapshot) }
    }

    /// The key-value bucket of a group's partition state.
    static func bucketName(_ group: String) -> String { "rivulet-state-\(group)" }

    /// A partition's key in the bucket.
    static func key(_ partition: Int) -> String { "partitions.\(partition)" }

    /// The durable consumer `partition` was read through by a runner without --state, and by
    /// one of an earlier Rivulet.
    func sharedConsumerName(_ partition: Int) -> String { "\(group)-p\(partition)" }

    /// A consumer of its own for each taking over of `partition` (`GROUP-pP-TOKEN`): what a
    /// runner that lost the partition without knowing still asks of its consumer, acknowledges
    /// or gives back never reaches the consumer its new holder reads.
    func newConsumerName(_ partition: Int) -> String {
        let token = String(UInt32.random(in: .min ... .max), radix: 16)
        return "\(sharedConsumerName(partition))-\(String(repeating: "0", count: 8 - token.count))\(token)"
    }

    /// Whether `name` is a consumer of one of this group's partitions (`GROUP-pP` or `GROUP-pP-TOKEN`).
    func isPartitionConsumer(_ name: String) -> Bool {
        let start = "\(group)-p"
        guard name.hasPrefix(start) else { return false }
        let rest = name.dropFirst(start.count)
        let digits = rest.prefix(while: \.isNumber)
        guard !digits.isEmpty else { return false }
        let tail = rest.dropFirst(digits.count)
        return tail.isEmpty || (tail.first == "-" && tail.dropFirst().allSatisfy(\.isHexDigit))
    }

    /// The consumer each partition is read through now, as its holder stored it last (none for a
    /// partition never stored), from the bucket's `entries`.
    static func currentConsumers(in entries: [String: LeaseBucketEntry]) -> [Int: String] {
        var found: [Int: String] = [:]
        for (key, entry) in entries where key.hasPrefix("partitions.") {
            guard let partition = Int(key.dropFirst("partitions.".count)),
                let consumer = (try? JSONParser.parse(entry.value))?["consumer"]?.stringValue
            else { continue }
            found[partition] = consumer
        }
        return found
    }

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
    /// its reader starts): the entry is written again, naming the new consumer this runner reads
    /// it through, so the revision a stale owner would write over is gone. Throws when the bucket
    /// cannot be read or written (the next round tries again). `previous` is the consumer the
    /// last owner read it through.
    func claim(_ partition: Int) throws -> (
        state: JSONObject, position: Value?, revision: UInt64, consumer: String, previous: String
    ) {
        guard let store else { throw NATSSetupError("the state bucket of group '\(group)' is not open") }
        let key = Self.key(partition)
        for _ in 0..<5 {
            let entry = try store.entry(key)
            var claimed = try entry.map { try checked($0.value, partition: partition) } ?? JSONObject()
            let previous = claimed["consumer"]?.stringValue ?? sharedConsumerName(partition)
            let consumer = newConsumerName(partition)
            claimed["owner"] = .string(runner)
            claimed["consumer"] = .string(consumer)
            let text = JSONSerializer.string(.object(claimed))
            let revision =
                if let entry {
                    try store.update(key, text, expected: entry.revision)
                } else {
                    try store.create(key, text)
                }
            if let revision {
                let position = claimed["position"].flatMap { $0 == .null ? nil : $0 }
                return (claimed["state"]?.objectValue ?? JSONObject(), position, revision, consumer, previous)
            }
        }
        throw NATSSetupError("partition \(partition) of group '\(group)' is being claimed by another runner")
    }

    /// A partition's stored entry, checked: what is stored is input, and a bad one (written by
    /// hand, by another program, or cut short) is refused with what is wrong and where, never
    /// read as an empty state (the partition would be read again from the stream's start) nor
    /// trapped on (every runner taking the partition would crash, again on each restart).
    func checked(_ text: String, partition: Int) throws -> JSONObject {
        try Self.checked(text, partition: partition, group: group)
    }

    /// `checked` for the group `group` (what the stored-state fuzz target reaches).
    static func checked(_ text: String, partition: Int, group: String) throws -> JSONObject {
        let place = "the entry '\(Self.key(partition))' of bucket '\(Self.bucketName(group))'"
        let remedy =
            "; fix or delete it to read partition \(partition) again (deleted, it is read from its consumer's position)"
        func refuse(_ what: String) -> NATSSetupError { NATSSetupError("\(place) \(what)\(remedy)") }
        let parsed: Value
        do {
            parsed = try JSONParser.parse(text)
        } catch {
            throw refuse("is not JSON (\(text.utf8.count) bytes: \(error))")
        }
        guard let object = parsed.objectValue else { throw refuse("is not a JSON object but \(parsed.typeName)") }
        for field in ["owner", "consumer"] {
            if let value = object[field], value != .null, value.stringValue == nil {
                throw refuse("has a '\(field)' that is not text: \(value.typeName)")
            }
        }
        if let state = object["state"], state != .null, state.objectValue == nil {
            throw refuse("has a 'state' that is not an object: \(state.typeName)")
        }
        guard let position = object["position"], position != .null else { return object }
        guard let fields = position.objectValue else { throw refuse("has a 'position' that is not an object") }
        if let problem = NATSCoverage.problem(withFields: fields) { throw refuse(problem) }
        return object
    }

    /// This runner reads `partition` from now on, through `consumer`, from `state` (its chains are
    /// built again from it) at the entry's `revision`.
    func take(_ partition: Int, state: JSONObject, revision: UInt64, consumer: String) {
        held[partition] = revision
        consumers[partition] = consumer
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
        if let consumer = consumers.removeValue(forKey: partition) { positions?.remove(consumer) }
        for chains in chainSets { chains.install(partition, [:]) }
    }

    /// A checkpoint's snapshot: each held partition's chain state and position go to its entry
    /// in the bucket, compare-and-set on the revision this runner wrote last; the state of the
    /// partitions it does not hold is dropped, and the rest stays for the runner's own store.
    /// An entry larger than the server takes fails the checkpoint, and with it the run: it cannot
    /// be stored by any runner, and reading on would acknowledge what no stored state holds.
    private func store(_ snapshot: inout JSONObject) throws {
        var states: [Int: JSONObject] = [:]
        for chains in chainSets {
            for key in snapshot.keys {
                guard let partition = chains.partition(ofKey: key) else { continue }
                states[partition, default: JSONObject()][key] = snapshot[key]
                snapshot[key] = nil
            }
        }
        var positionsOf: [Int: Value] = [:]
        if var source = snapshot[sourceKey]?.objectValue, var read = source["consumers"]?.objectValue {
            for (partition, consumer) in consumers { positionsOf[partition] = read[consumer] }
            for name in read.keys where isPartitionConsumer(name) { read[name] = nil }
            source["consumers"] = .object(read)
            snapshot[sourceKey] = .object(source)
        }
        guard !held.isEmpty else { return }
        guard let store else { return }
        for (partition, revision) in held.sorted(by: { $0.key < $1.key }) {
            let entry: Value = [
                "owner": .string(runner), "state": .object(states[partition] ?? JSONObject()),
                "position": positionsOf[partition] ?? .null,
                "consumer": consumers[partition].map(Value.string) ?? .null,
            ]
            let text = JSONSerializer.string(entry)
            do {
                if let written = try store.update(Self.key(partition), text, expected: revision) {
                    held[partition] = written
                } else {
                    lose(partition, because: "another runner holds it now")
                }
            } catch let error as NATSError where error.isTooLarge {
                throw NATSSetupError(
                    "partition \(partition) of group '\(group)': its state is \(text.utf8.count) bytes, more than the "
                        + "server takes in one entry of bucket '\(Self.bucketName(group))' (\(error)); the checkpoint "
                        + "is not taken and nothing since the last one is acknowledged; raise the server's "
                        + "max_payload (at most 64 MB), or give the group more partitions")
            } catch {
                lose(partition, because: "its state could not be stored (\(error))")
            }
        }
    }

    /// A partition whose state this checkpoint could not store: what it holds is not
    /// acknowledged, its state here is dropped, and it is read again from what is stored.
    private func lose(_ partition: Int, because reason: String) {
        report("partition \(partition) of group \(group): \(reason); reading it again from its stored state")
        if let consumer = consumers.removeValue(forKey: partition) { positions?.remove(consumer) }
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
