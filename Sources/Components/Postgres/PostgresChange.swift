import Pipeline
import Postgres
import Reactive

/// One change read from a replication slot, as the origin of what it causes: when nothing holds
/// it any more its transaction counts it done (`PostgresConfirmations`), or failed if something
/// failed on it, so the slot is confirmed past it only once everything it caused is written.
/// Under `--state` it is done only once a committed checkpoint holds its effect
/// (`PostgresCoverage`).
final class PostgresChange: Origin, ResultIdentifying {
    private let confirmations: PostgresConfirmations
    private let transaction: PostgresConfirmations.Transaction
    private let coverage: PostgresCoverage?
    /// Its transaction's commit position and its own: what a checkpoint lists it by.
    private let commit: LogSequenceNumber
    private let position: LogSequenceNumber
    /// `SLOT:LSN`, the id its results are written with.
    private let identity: String
    private var failed = false
    /// Set once a committed checkpoint holds its effect and it was counted done.
    private var counted = false
    private var results = 0

    init(
        slot: String, position: LogSequenceNumber, commit: LogSequenceNumber,
        transaction: PostgresConfirmations.Transaction, confirmations: PostgresConfirmations,
        coverage: PostgresCoverage?
    ) {
        self.confirmations = confirmations
        self.transaction = transaction
        self.coverage = coverage
        self.commit = commit
        self.position = position
        identity = "\(slot):\(position)"
        confirmations.add(to: transaction)
    }

    /// A row of the initial snapshot: done once written, never passed over (a snapshot cut short
    /// is taken again whole, with other ids).
    init(
        snapshotRow identity: String, at position: LogSequenceNumber,
        transaction: PostgresConfirmations.Transaction, confirmations: PostgresConfirmations
    ) {
        self.confirmations = confirmations
        self.transaction = transaction
        coverage = nil
        commit = position
        self.position = position
        self.identity = identity
        confirmations.add(to: transaction)
    }

    /// `SLOT:LSN` for the first result, then `:2`, `:3`…: the same when the change is read again.
    func nextResultID() -> String? {
        results += 1
        return results == 1 ? identity : "\(identity):\(results)"
    }

    override func fail(_ error: any Error) {
        failed = true
    }

    // The checkpoint being taken holds this change's effect: its position lists it.
    override func checkpointing() {
        if !failed { coverage?.cover(commit: commit, change: position) }
    }

    // An operator's state in a committed checkpoint holds the change: it is done now, so a stage
    // that holds many (a window) does not keep the slot back until it lets go of them.
    override func checkpointed() {
        guard !counted, !failed else { return }
        counted = true
        confirmations.done(transaction, failed: false)
    }

    deinit {
        guard !counted else { return }
        if let coverage, !failed {
            coverage.await(.init(transaction: transaction, commit: commit, change: position))
        } else {
            confirmations.done(transaction, failed: failed)
        }
    }

    /// One element, `{op, schema, table, before, after, lsn, commitTime}` (commitTime in
    /// milliseconds since the Unix epoch): the one shape of a change and of a snapshot's row.
    static func element(
        op: String, schema: String, table: String, before: Value, after: Value, position: LogSequenceNumber,
        commitTime: Int
    ) -> Value {
        var object = JSONObject()
        object["op"] = .string(op)
        object["schema"] = .string(schema)
        object["table"] = .string(table)
        object["before"] = before
        object["after"] = after
        object["lsn"] = .string(position.description)
        object["commitTime"] = .int(commitTime)
        return .object(object)
    }

    /// The elements of a change: `{op, schema, table, before, after, lsn, commitTime}`, each row
    /// an object of its columns' values (`before` only what the server sent: the key, or the
    /// whole row under `REPLICA IDENTITY FULL`; a large value an update left untouched is not
    /// sent and is missing from `after`). A truncation is one element per table, with neither row.
    static func elements(
        _ message: PgOutputDecoder.Message, position: LogSequenceNumber, commitTime: Int64,
        numerics: PostgresValues.Numerics
    ) -> [Value] {
        func row(_ values: [PgOutputDecoder.Value]?, of relation: PgOutputDecoder.Relation, keyOnly: Bool) -> Value {
            guard let values else { return .null }
            var object = JSONObject()
            for (column, value) in zip(relation.columns, values) where !keyOnly || column.isKey {
                switch value {
                case .unchanged: continue
                case .null: object[column.name] = .null
                case .text(let text):
                    object[column.name] = PostgresValues.value(text, type: column.type, numerics: numerics)
                }
            }
            return .object(object)
        }
        func change(_ op: String, _ relation: PgOutputDecoder.Relation, before: Value, after: Value) -> Value {
            element(
                op: op, schema: relation.schema, table: relation.name, before: before, after: after,
                position: position, commitTime: Int(PostgresClock.unixMilliseconds(commitTime)))
        }
        // `K` tuples carry the key and nulls for the rest; `O` (identity full) the whole old row.
        func keyOnly(_ relation: PgOutputDecoder.Relation) -> Bool { relation.replicaIdentity != UInt8(ascii: "f") }
        switch message {
        case .insert(let relation, let new):
            return [change("insert", relation, before: .null, after: row(new, of: relation, keyOnly: false))]
        case .update(let relation, let old, let new):
            return [
                change(
                    "update", relation, before: row(old, of: relation, keyOnly: keyOnly(relation)),
                    after: row(new, of: relation, keyOnly: false))
            ]
        case .delete(let relation, let old):
            return [
                change("delete", relation, before: row(old, of: relation, keyOnly: keyOnly(relation)), after: .null)
            ]
        case .truncate(let relations, _, _):
            return relations.map { change("truncate", $0, before: .null, after: .null) }
        default:
            return []
        }
    }
}
