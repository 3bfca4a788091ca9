import Pipeline
import Postgres
import Reactive

/// One change read from a replication slot, as the origin of what it causes: when nothing holds
/// it any more its transaction counts it done (`PostgresConfirmations`), or failed if something
/// failed on it, so the slot is confirmed past it only once everything it caused is written.
final class PostgresChange: Origin, ResultIdentifying {
    private let confirmations: PostgresConfirmations
    private let transaction: PostgresConfirmations.Transaction
    /// `SLOT:LSN`, the id its results are written with.
    private let identity: String
    private var failed = false
    private var results = 0

    init(
        slot: String, position: LogSequenceNumber, transaction: PostgresConfirmations.Transaction,
        confirmations: PostgresConfirmations
    ) {
        self.confirmations = confirmations
        self.transaction = transaction
        identity = "\(slot):\(position)"
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

    deinit {
        confirmations.done(transaction, failed: failed)
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
            var object = JSONObject()
            object["op"] = .string(op)
            object["schema"] = .string(relation.schema)
            object["table"] = .string(relation.name)
            object["before"] = before
            object["after"] = after
            object["lsn"] = .string(position.description)
            object["commitTime"] = .int(Int(PostgresClock.unixMilliseconds(commitTime)))
            return .object(object)
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
