/// A position in PostgreSQL's write-ahead log (an LSN), written as two hexadecimal halves
/// (`16/B374D848`) as the server writes it.
public struct LogSequenceNumber: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The position as one number.
    public let value: UInt64

    /// The position `value`.
    public init(_ value: UInt64) {
        self.value = value
    }

    /// The position written as `text` (`16/B374D848`); nil for anything else.
    public init?(_ text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, (1...8).contains(halves[0].count), (1...8).contains(halves[1].count),
            let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16)
        else { return nil }
        value = high << 32 | low
    }

    /// The start of the log: "from the slot's own position" in `START_REPLICATION`.
    public static let zero = LogSequenceNumber(0)

    /// The server's form, `16/B374D848`.
    public var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    /// Whether `left` is earlier in the log.
    public static func < (left: LogSequenceNumber, right: LogSequenceNumber) -> Bool { left.value < right.value }
}

/// PostgreSQL's clock in replication messages: microseconds since 2000-01-01 00:00:00 UTC.
public enum PostgresClock {
    /// Microseconds from the Unix epoch to PostgreSQL's.
    public static let epochOffset: Int64 = 946_684_800_000_000

    /// `microseconds` of PostgreSQL's clock as milliseconds since the Unix epoch.
    public static func unixMilliseconds(_ microseconds: Int64) -> Int64 {
        (microseconds + epochOffset) / 1000
    }

    /// Milliseconds since the Unix epoch as PostgreSQL's clock.
    public static func postgresMicroseconds(unixMilliseconds: Int64) -> Int64 {
        unixMilliseconds * 1000 - epochOffset
    }
}
