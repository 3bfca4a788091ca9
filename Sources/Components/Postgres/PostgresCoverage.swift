import Foundation
import Pipeline
import Postgres

/// Which changes of a replication slot the run's checkpoints hold, under `--state`.
///
/// A change's effect goes into a checkpoint (an operator's state, a sink's write) before the
/// slot is confirmed past it, and a confirmation can be lost (a SIGKILL right after the commit):
/// the server then sends the change again, and a run resumed from that checkpoint would count it
/// twice. So a checkpoint also lists the changes whose effect it holds, by their transaction's
/// commit position, and a resumed run passes over such a change without emitting it again.
///
/// And a change done without any checkpoint holding it (dropped by a `filter`, written by a
/// sink) counts as done for the slot only once the next checkpoint is committed: its effect on
/// the operators' state is durable only then.
///
/// Thread-safe: the pipeline's thread counts and commits, the reading thread asks what to skip.
final class PostgresCoverage: @unchecked Sendable {
    /// A change done, waiting for the next committed checkpoint.
    struct Done {
        let transaction: PostgresConfirmations.Transaction
        let commit: LogSequenceNumber
        let change: LogSequenceNumber
    }

    private let lock = NSLock()
    private let confirmations: PostgresConfirmations
    /// The changes a committed checkpoint, or the one being taken, holds, by their transaction's
    /// commit position (pgoutput's BEGIN names it).
    private var covered: [LogSequenceNumber: Set<LogSequenceNumber>]
    /// The changes done since the last checkpoint's position was read.
    private var done: [Done] = []
    /// The changes done that the checkpoint being committed holds.
    private var committing: [Done] = []

    /// What is wrong with a stored position (`position()`'s value), if anything: it is read from
    /// the state file, which a person or another program may have written.
    static func problem(with position: Value) -> String? {
        guard position != .null else { return nil }
        guard let transactions = position["transactions"]?.objectValue else {
            return "has no 'transactions' object"
        }
        for (commit, changes) in transactions {
            guard LogSequenceNumber(commit) != nil else { return "names '\(commit)', not a log position" }
            guard let list = changes.arrayValue,
                list.allSatisfy({ $0.stringValue.flatMap(LogSequenceNumber.init) != nil })
            else { return "lists for \(commit) something other than log positions" }
        }
        return nil
    }

    /// Coverage starting from what a checkpoint held (checked with `problem(with:)`), or from
    /// nothing; a transaction is forgotten once `confirmations` moved past it.
    init(restoring position: Value?, confirmations: PostgresConfirmations) {
        self.confirmations = confirmations
        var covered: [LogSequenceNumber: Set<LogSequenceNumber>] = [:]
        for (commit, changes) in position?["transactions"]?.objectValue ?? JSONObject() {
            guard let commit = LogSequenceNumber(commit) else { continue }
            covered[commit] = Set(
                (changes.arrayValue ?? []).compactMap { $0.stringValue.flatMap(LogSequenceNumber.init) })
        }
        self.covered = covered
    }

    /// Whether a checkpoint holds the effect of the change at `change` of the transaction
    /// committing at `commit`.
    func contains(commit: LogSequenceNumber, change: LogSequenceNumber) -> Bool {
        lock.withLock { covered[commit]?.contains(change) ?? false }
    }

    /// Counts a change as held by the checkpoint being taken.
    func cover(commit: LogSequenceNumber, change: LogSequenceNumber) {
        lock.withLock { _ = covered[commit, default: []].insert(change) }
    }

    /// Keeps a change, done, until the next checkpoint is committed.
    func await(_ change: Done) {
        lock.withLock { done.append(change) }
    }

    /// What the checkpoint being taken holds (on the pipeline's thread, once the changes it keeps
    /// were counted): the changes of every transaction not yet confirmed, the done ones included.
    func position() -> Value {
        let confirmed = confirmations.told
        return lock.withLock {
            committing += done
            for change in done { covered[change.commit, default: []].insert(change.change) }
            done = []
            // A transaction whose commit lies before the position the server was told is never
            // sent again (only told: a runner killed before the telling reads it again).
            covered = covered.filter { $0.key >= confirmed }
            var transactions = JSONObject()
            for (commit, changes) in covered.sorted(by: { $0.key < $1.key }) {
                transactions[commit.description] = .array(changes.sorted().map { .string($0.description) })
            }
            return ["transactions": .object(transactions)]
        }
    }

    /// The done changes the committed checkpoint holds now count as done for the slot.
    func committed() {
        let changes = lock.withLock {
            defer { committing = [] }
            return committing
        }
        for change in changes { confirmations.done(change.transaction, failed: false) }
    }

    /// How many changes wait for a checkpoint.
    var waiting: Int { lock.withLock { done.count } }
}
