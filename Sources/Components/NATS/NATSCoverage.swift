import CNATS
import Foundation
import Pipeline

/// Which messages of one durable consumer the run's checkpoints hold, under `--state`.
///
/// A message's effect goes into a checkpoint (an operator's state, a sink's write) before the
/// message is acknowledged, and an acknowledgement can be lost (a SIGKILL right after the
/// commit, a connection gone): the server then delivers the message again, and a run resumed
/// from that checkpoint would count it twice. So a checkpoint also holds the stream sequences
/// whose effect it holds — the consumer's acknowledgement floor on the server and the sequences
/// above it — and a resumed run acknowledges such a message without processing it again.
///
/// And a message done without any checkpoint holding it (dropped by a `filter`, written by a
/// sink) is acknowledged only once the next checkpoint is committed: its effect on the
/// operators' state (a `scan`'s total, the keys `distinct` has seen) is durable only then.
///
/// Thread-safe: the pipeline's thread counts and commits, the fetch thread raises the floor.
final class NATSCoverage: @unchecked Sendable {
    /// A message done, waiting for the next committed checkpoint to be acknowledged.
    private struct Done {
        let consumer: NATSConsumer
        let message: OpaquePointer
        let sequence: UInt64
    }

    private let lock = NSLock()
    /// The consumer's acknowledgement floor on the server: nothing at or below it comes again.
    private var floor: UInt64
    /// The sequences above the floor whose effect a committed checkpoint, or the one being
    /// taken, holds.
    private var covered: Set<UInt64>
    /// The messages done since the last checkpoint's positions were read.
    private var done: [Done] = []
    /// The messages done that the checkpoint being committed holds.
    private var committing: [Done] = []

    /// Set when the partition this consumer reads is no longer this runner's (handed over, lost,
    /// or its state could not be stored): nothing it covers is acknowledged any more.
    private var abandoned = false

    /// The highest acknowledgement floor a stored position may give: the next sequence must fit.
    static let highestFloor = Int(Int64.max - 1)

    /// What is wrong with the fields of a stored position (`position()`'s value), if anything: it
    /// is read from a store (a runner's SQLite file, a group's bucket), written by hand or by
    /// another program, and a negative floor read as 0 would read the stream again from its start.
    static func problem(withFields fields: JSONObject) -> String? {
        if let floor = fields["floor"], floor != .null {
            guard let value = floor.intValue, (0...highestFloor).contains(value) else {
                return "has the floor \(floor), not a sequence from 0 to \(highestFloor)"
            }
        }
        if let sequences = fields["sequences"], sequences != .null {
            guard let items = sequences.arrayValue,
                items.allSatisfy({ $0.intValue.map { (1...highestFloor + 1).contains($0) } ?? false })
            else { return "has 'sequences' that are not a list of stream sequences" }
        }
        return nil
    }

    /// Coverage starting from what a checkpoint held (`position()`'s value, checked with
    /// `problem(withFields:)`), or from nothing.
    init(restoring position: Value?) {
        floor = UInt64(max(position?["floor"]?.intValue ?? 0, 0))
        covered = Set((position?["sequences"]?.arrayValue ?? []).compactMap { $0.intValue.map { UInt64(max($0, 0)) } })
    }

    /// Whether a checkpoint holds the effect of the message at stream sequence `sequence`.
    func contains(_ sequence: UInt64) -> Bool {
        lock.withLock { sequence <= floor || covered.contains(sequence) }
    }

    /// Counts `sequence` as held by checkpoints: kept by the one being taken, or acknowledged.
    func cover(_ sequence: UInt64) {
        lock.withLock {
            if sequence > floor { covered.insert(sequence) }
        }
    }

    /// Keeps `message`, done, until the next checkpoint is committed.
    func await(_ message: OpaquePointer, sequence: UInt64, of consumer: NATSConsumer) {
        let kept = lock.withLock {
            if abandoned { return false }
            done.append(Done(consumer: consumer, message: message, sequence: sequence))
            return true
        }
        if !kept { consumer.giveBack(message, sequence: sequence) }
    }

    /// Whether the partition was let go of: a message held in its state is not acknowledged.
    var isAbandoned: Bool { lock.withLock { abandoned } }

    /// Lets go of the partition: what waits to be acknowledged goes back to the stream instead,
    /// for the partition's next owner, which restores the state that does not hold it.
    func abandon() {
        let messages = lock.withLock {
            abandoned = true
            defer {
                done = []
                committing = []
            }
            return done + committing
        }
        for message in messages { message.consumer.giveBack(message.message, sequence: message.sequence) }
    }

    /// How many sequences above the floor a checkpoint lists.
    var listed: Int { lock.withLock { covered.count } }

    /// How many messages wait for a checkpoint to be acknowledged.
    var waiting: Int { lock.withLock { done.count } }

    /// What the checkpoint being taken holds (on the pipeline's thread, once the messages it
    /// keeps were counted): the floor and the sequences above it, the done messages included.
    func position() -> Value {
        lock.withLock {
            committing += done
            for message in done where message.sequence > floor { covered.insert(message.sequence) }
            done = []
            let sequences = covered.sorted().map { Value.int(Int(truncatingIfNeeded: $0)) }
            return ["floor": .int(Int(truncatingIfNeeded: floor)), "sequences": .array(sequences)]
        }
    }

    /// Acknowledges the done messages the committed checkpoint holds (the run's last checkpoint,
    /// taken after a stop, included: they are done, and not delivered again).
    func committed() {
        let messages = lock.withLock {
            defer { committing = [] }
            return committing
        }
        for message in messages {
            message.consumer.settle(message.message, failure: nil, sequence: message.sequence, checkpointed: true)
        }
    }

    /// Gives back the done messages of `consumer` that no checkpoint will hold (it is closing
    /// after the run's last checkpoint): they are processed again after the last one.
    func giveBack(of consumer: NATSConsumer) {
        let messages = lock.withLock {
            let mine = done.filter { $0.consumer === consumer }
            done.removeAll { $0.consumer === consumer }
            return mine
        }
        for message in messages { consumer.giveBack(message.message, sequence: message.sequence) }
    }

    /// Raises the floor to the server's acknowledgement floor, forgetting the sequences at or
    /// below it (the server delivers none of them again).
    func raiseFloor(to serverFloor: UInt64) {
        lock.withLock {
            guard serverFloor > floor else { return }
            floor = serverFloor
            covered = covered.filter { $0 > serverFloor }
        }
    }
}

/// The coverage of every consumer a `nats` source reads (one, or one a partition of a group),
/// by consumer name, kept as the source's position in each checkpoint.
final class NATSPositions: @unchecked Sendable {
    private let lock = NSLock()
    private var consumers: [String: NATSCoverage] = [:]
    private var restored: [String: Value]

    /// Positions resuming from `restored` (what `value()` returned at the checkpoint), or none.
    ///
    /// - Throws: `NATSSetupError` naming the consumer whose stored position is damaged: resuming
    ///   from it would read the stream again, or trap.
    init(restoring restored: Value?) throws {
        var byName: [String: Value] = [:]
        let remedy = "; reset the pipeline's checkpoint to start over (rivulet state FILE --reset NAME)"
        if let consumers = restored?["consumers"], consumers != .null {
            guard case .object(let object) = consumers else {
                throw NATSSetupError("the checkpoint's positions are \(consumers.typeName), not an object\(remedy)")
            }
            for (name, value) in object {
                guard let fields = value.objectValue else {
                    throw NATSSetupError(
                        "the checkpoint's position of consumer '\(name)' is \(value.typeName), not an object\(remedy)")
                }
                if let problem = NATSCoverage.problem(withFields: fields) {
                    throw NATSSetupError("the checkpoint's position of consumer '\(name)' \(problem)\(remedy)")
                }
                byName[name] = value
            }
        }
        self.restored = byName
    }

    /// The coverage of the consumer `name`, the same for every reader of it in this run.
    func coverage(of name: String) -> NATSCoverage {
        lock.withLock {
            if let existing = consumers[name] { return existing }
            let made = NATSCoverage(restoring: restored.removeValue(forKey: name))
            consumers[name] = made
            return made
        }
    }

    /// Starts the consumer `name` afresh from `coverage` (made from the position a partition's
    /// last owner committed); the coverage it had here, if any, is abandoned. On the pipeline's
    /// thread, in order with `remove`: a partition lost and taken again in the next round keeps
    /// the coverage its new reader counts in.
    func install(_ name: String, _ coverage: NATSCoverage) {
        let previous = lock.withLock {
            restored[name] = nil
            return consumers.updateValue(coverage, forKey: name)
        }
        if previous !== coverage { previous?.abandon() }
    }

    /// Forgets the consumer `name` (a partition this runner no longer reads), abandoning what
    /// its coverage waits to acknowledge.
    func remove(_ name: String) {
        let previous = lock.withLock {
            restored[name] = nil
            return consumers.removeValue(forKey: name)
        }
        previous?.abandon()
    }

    /// The coverage of the consumer `name` if it is read in this run.
    func existing(_ name: String) -> NATSCoverage? {
        lock.withLock { consumers[name] }
    }

    /// Every consumer's position, for a checkpoint; a consumer not read in this run keeps the
    /// position it was restored with (its partition may come back).
    func value() -> Value {
        let (all, kept) = lock.withLock { (consumers, restored) }
        var object = JSONObject()
        for (name, value) in kept { object[name] = value }
        for (name, coverage) in all.sorted(by: { $0.key < $1.key }) { object[name] = coverage.position() }
        return ["consumers": .object(object)]
    }

    /// Acknowledges what the committed checkpoint holds.
    func committed() {
        for coverage in lock.withLock({ Array(consumers.values) }) { coverage.committed() }
    }
}
