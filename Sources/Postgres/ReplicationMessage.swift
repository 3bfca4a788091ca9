/// A message of the copy-both stream of a replication connection, and the one the client sends
/// back: what the server streams (`w` log data, `k` keep-alive) and the standby status update.
public enum ReplicationMessage: Equatable, Sendable {
    /// A piece of the log decoded by the output plugin: where it starts, the server's end of log
    /// when it sent it, its clock, and the plugin's bytes.
    case logData(start: LogSequenceNumber, end: LogSequenceNumber, clock: Int64, payload: ArraySlice<UInt8>)
    /// The server is alive; its end of log; whether it wants a status update at once.
    case keepAlive(end: LogSequenceNumber, clock: Int64, replyRequested: Bool)

    /// Reads one message the server streamed.
    public init(_ bytes: [UInt8]) throws(PostgresError) {
        var reader = ByteReader(bytes[...])
        switch try reader.byte() {
        case UInt8(ascii: "w"):
            let start = try reader.uint64()
            let end = try reader.uint64()
            let clock = try reader.int64()
            self = .logData(
                start: LogSequenceNumber(start), end: LogSequenceNumber(end), clock: clock, payload: reader.rest)
        case UInt8(ascii: "k"):
            let end = try reader.uint64()
            let clock = try reader.int64()
            self = .keepAlive(end: LogSequenceNumber(end), clock: clock, replyRequested: try reader.byte() == 1)
        case let kind:
            throw PostgresError("an unknown replication message '\(Character(Unicode.Scalar(kind)))'")
        }
    }

    /// The standby status update: everything up to `flushed` is durable on the client's side, so
    /// the server may let go of the log before it (the slot's confirmed position).
    public static func standbyStatus(
        written: LogSequenceNumber, flushed: LogSequenceNumber, applied: LogSequenceNumber, clock: Int64,
        replyRequested: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "r")]
        bytes.reserveCapacity(34)
        for value in [written.value, flushed.value, applied.value, UInt64(bitPattern: clock)] {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        bytes.append(replyRequested ? 1 : 0)
        return bytes
    }
}

/// Reads the big-endian fields of PostgreSQL's protocol messages.
struct ByteReader {
    private(set) var rest: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        rest = bytes
    }

    var isAtEnd: Bool { rest.isEmpty }

    mutating func byte() throws(PostgresError) -> UInt8 {
        guard let first = rest.first else { throw Self.truncated }
        rest = rest.dropFirst()
        return first
    }

    mutating func uint64() throws(PostgresError) -> UInt64 { try integer(UInt64.self) }
    mutating func int64() throws(PostgresError) -> Int64 { Int64(bitPattern: try integer(UInt64.self)) }
    mutating func uint32() throws(PostgresError) -> UInt32 { try integer(UInt32.self) }
    mutating func int32() throws(PostgresError) -> Int32 { Int32(bitPattern: try integer(UInt32.self)) }
    mutating func uint16() throws(PostgresError) -> UInt16 { try integer(UInt16.self) }

    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws(PostgresError) -> T {
        let size = MemoryLayout<T>.size
        guard rest.count >= size else { throw Self.truncated }
        var value: T = 0
        for byte in rest.prefix(size) { value = value << 8 | T(byte) }
        rest = rest.dropFirst(size)
        return value
    }

    /// A NUL-terminated string.
    mutating func cString() throws(PostgresError) -> String {
        guard let end = rest.firstIndex(of: 0) else { throw Self.truncated }
        let text = String(decoding: rest[..<end], as: UTF8.self)
        rest = rest[(end + 1)...]
        return text
    }

    mutating func bytes(_ count: Int) throws(PostgresError) -> ArraySlice<UInt8> {
        guard count >= 0, rest.count >= count else { throw Self.truncated }
        defer { rest = rest.dropFirst(count) }
        return rest.prefix(count)
    }

    static let truncated = PostgresError("a replication message ended before its last field")
}
