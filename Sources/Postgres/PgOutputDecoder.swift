/// Reads the messages of PostgreSQL's built-in logical decoding plugin, `pgoutput` (protocol
/// version 1, PostgreSQL 10 and later), keeping the tables it described: a change names its table
/// by id only, after a `Relation` message that described it (again after each change of its shape).
///
/// Pure: bytes in, messages out, no I/O — the replication reader feeds it.
public struct PgOutputDecoder: Sendable {
    /// The tables described so far, by id.
    public private(set) var relations: [UInt32: Relation] = [:]

    /// A decoder that knows no table yet.
    public init() {}

    /// A table as `pgoutput` describes it.
    public struct Relation: Equatable, Sendable {
        /// The table's OID.
        public let id: UInt32
        /// Its schema (`public`).
        public let schema: String
        /// Its name.
        public let name: String
        /// `d` default (the primary key), `n` nothing, `f` full row, `i` an index.
        public let replicaIdentity: UInt8
        /// Its columns, in order.
        public let columns: [Column]

        /// A table as described.
        public init(id: UInt32, schema: String, name: String, replicaIdentity: UInt8, columns: [Column]) {
            self.id = id
            self.schema = schema
            self.name = name
            self.replicaIdentity = replicaIdentity
            self.columns = columns
        }
    }

    /// A column of a `Relation`.
    public struct Column: Equatable, Sendable {
        /// The column's name.
        public let name: String
        /// Its type's OID (see `PostgresType`).
        public let type: UInt32
        /// Whether it is part of the replica identity (the key an update or delete names).
        public let isKey: Bool

        /// A column as described.
        public init(name: String, type: UInt32, isKey: Bool) {
            self.name = name
            self.type = type
            self.isKey = isKey
        }
    }

    /// One column's value in a changed row.
    public enum Value: Equatable, Sendable {
        case null
        /// A large value stored apart (TOAST) that the change did not touch: not sent.
        case unchanged
        /// The value in PostgreSQL's text form.
        case text(String)
    }

    /// A decoded message.
    public enum Message: Equatable, Sendable {
        /// A transaction starts; `finalLSN` is where its commit is, `commitTime` PostgreSQL's clock.
        case begin(finalLSN: LogSequenceNumber, commitTime: Int64, transaction: UInt32)
        /// The transaction ends; everything before `end` is in it.
        case commit(commitLSN: LogSequenceNumber, end: LogSequenceNumber, commitTime: Int64)
        /// A table's description (kept by the decoder).
        case relation(Relation)
        case insert(Relation, new: [Value])
        /// `old` is the replica identity's columns (or the whole row with `REPLICA IDENTITY FULL`)
        /// when the key changed or the identity is full; nil otherwise.
        case update(Relation, old: [Value]?, new: [Value])
        case delete(Relation, old: [Value])
        case truncate([Relation], cascade: Bool, restartIdentity: Bool)
        /// A message Rivulet has no use for (origin, type, logical message).
        case other(UInt8)
    }

    /// Decodes one message of `pgoutput`.
    public mutating func decode(_ bytes: ArraySlice<UInt8>) throws(PostgresError) -> Message {
        var reader = ByteReader(bytes)
        let kind = try reader.byte()
        switch kind {
        case UInt8(ascii: "B"):
            let final = try reader.uint64()
            let time = try reader.int64()
            return .begin(finalLSN: LogSequenceNumber(final), commitTime: time, transaction: try reader.uint32())
        case UInt8(ascii: "C"):
            _ = try reader.byte()  // flags, unused
            let commit = try reader.uint64()
            let end = try reader.uint64()
            return .commit(
                commitLSN: LogSequenceNumber(commit), end: LogSequenceNumber(end), commitTime: try reader.int64())
        case UInt8(ascii: "R"):
            let id = try reader.uint32()
            let schema = try reader.cString()
            let name = try reader.cString()
            let identity = try reader.byte()
            let count = Int(try reader.uint16())
            var columns: [Column] = []
            for _ in 0..<count {
                let flags = try reader.byte()
                let columnName = try reader.cString()
                let type = try reader.uint32()
                _ = try reader.int32()  // the type modifier
                columns.append(Column(name: columnName, type: type, isKey: flags & 1 == 1))
            }
            let relation = Relation(id: id, schema: schema, name: name, replicaIdentity: identity, columns: columns)
            relations[id] = relation
            return .relation(relation)
        case UInt8(ascii: "I"):
            let relation = try self.relation(reader.uint32())
            guard try reader.byte() == UInt8(ascii: "N") else { throw Self.malformed("insert") }
            return .insert(relation, new: try Self.tuple(&reader, of: relation))
        case UInt8(ascii: "U"):
            let relation = try self.relation(reader.uint32())
            var old: [Value]?
            var marker = try reader.byte()
            if marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") {
                old = try Self.tuple(&reader, of: relation)
                marker = try reader.byte()
            }
            guard marker == UInt8(ascii: "N") else { throw Self.malformed("update") }
            return .update(relation, old: old, new: try Self.tuple(&reader, of: relation))
        case UInt8(ascii: "D"):
            let relation = try self.relation(reader.uint32())
            let marker = try reader.byte()
            guard marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") else { throw Self.malformed("delete") }
            return .delete(relation, old: try Self.tuple(&reader, of: relation))
        case UInt8(ascii: "T"):
            let count = Int(try reader.uint32())
            let options = try reader.byte()
            var truncated: [Relation] = []
            for _ in 0..<count { truncated.append(try relation(reader.uint32())) }
            return .truncate(truncated, cascade: options & 1 != 0, restartIdentity: options & 2 != 0)
        default:
            return .other(kind)
        }
    }

    private func relation(_ id: UInt32) throws(PostgresError) -> Relation {
        guard let relation = relations[id] else {
            throw PostgresError("a change of table \(id), which no Relation message described")
        }
        return relation
    }

    /// A row's values; a table described with more or fewer columns than the row has is an error.
    private static func tuple(_ reader: inout ByteReader, of relation: Relation) throws(PostgresError) -> [Value] {
        let count = Int(try reader.uint16())
        guard count == relation.columns.count else {
            throw PostgresError(
                "a row of \(relation.schema).\(relation.name) with \(count) columns; its description has \(relation.columns.count)"
            )
        }
        var values: [Value] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            switch try reader.byte() {
            case UInt8(ascii: "n"): values.append(.null)
            case UInt8(ascii: "u"): values.append(.unchanged)
            case UInt8(ascii: "t"):
                let length = Int(try reader.int32())
                values.append(.text(String(decoding: try reader.bytes(length), as: UTF8.self)))
            case let kind:
                throw PostgresError("a column value of unknown kind '\(Character(Unicode.Scalar(kind)))'")
            }
        }
        return values
    }

    private static func malformed(_ what: String) -> PostgresError {
        PostgresError("a malformed \(what) message from pgoutput")
    }
}
