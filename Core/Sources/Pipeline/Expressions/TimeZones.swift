import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A time zone of the system's tz database (`Europe/Paris`), read once from its TZif file in
/// `/usr/share/zoneinfo`: its offset from UTC at any time, and the abbreviation in use then.
struct TimeZoneRules: Sendable {
    struct Kind: Sendable, Equatable {
        let offset: Int
        let abbreviation: String
    }

    let name: String
    /// Transition times (seconds since the epoch), ascending, with the kind that starts at each.
    let transitions: [Int]
    let kindAtTransition: [Int]
    let kinds: [Kind]
    /// The kind before the first transition.
    let initial: Int
    /// The rule for every time after the last transition (the file's footer), if it has one.
    var rule: PosixTimeZoneRule? = nil

    static let utc = TimeZoneRules(
        name: "UTC", transitions: [], kindAtTransition: [], kinds: [Kind(offset: 0, abbreviation: "UTC")], initial: 0)

    /// The offset (seconds east of UTC) and abbreviation at `milliseconds` since the epoch. After
    /// the last transition in the file (2037 in the usual files) the file's POSIX rule says, as
    /// the C library and Python read it; without one, the last kind stays.
    func kind(at milliseconds: Int) -> Kind {
        let seconds = TimeText.floorDivide(milliseconds, 1000).quotient
        if let rule, transitions.last.map({ seconds >= $0 }) ?? true { return rule.kind(atSecond: seconds) }
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle] <= seconds { low = middle + 1 } else { high = middle }
        }
        return kinds[low == 0 ? initial : kindAtTransition[low - 1]]
    }

    private static let cache = Mutex<[String: TimeZoneRules]>([:])
    static let directory = "/usr/share/zoneinfo"

    /// The zone called `name` (`UTC`, `Europe/Paris`, `America/New_York`); nil if the system has
    /// no such zone.
    static func named(_ name: String) -> TimeZoneRules? {
        if name == "UTC" || name == "Z" { return utc }
        if let known = cache.withLock({ $0[name] }) { return known }
        guard !name.isEmpty, !name.hasPrefix("/"), !name.split(separator: "/").contains(".."),
            let bytes = LocalFiles.readBytes("\(directory)/\(name)"), bytes.count < 1 << 20,
            let rules = parse(bytes, name: name)
        else { return nil }
        cache.withLock { $0[name] = rules }
        return rules
    }

    /// The rules of a TZif file (RFC 8536), from its 64-bit part when it has one.
    static func parse(_ bytes: [UInt8], name: String) -> TimeZoneRules? {
        let file = TZifBytes(bytes: bytes)
        let (integer, header) = (file.integer, file.header)
        guard let first = header(0) else { return nil }
        var start = 44
        var timeSize = 4
        var rule: PosixTimeZoneRule?
        if first.version >= UInt8(ascii: "2") {
            let (utc, std, leap, times, types, chars) = (
                first.counts[0], first.counts[1], first.counts[2], first.counts[3], first.counts[4], first.counts[5]
            )
            start += times * 5 + types * 6 + chars + leap * 8 + std + utc
            guard header(start) != nil else { return nil }
            start += 44
            timeSize = 8
        }
        guard let counts = header(start - 44)?.counts else { return nil }
        let (times, types, chars) = (counts[3], counts[4], counts[5])
        if timeSize == 8 {
            // The footer follows the 64-bit data: a newline, the rule, a newline.
            let footer = start + times * 9 + types * 6 + chars + counts[2] * 12 + counts[1] + counts[0]
            if footer < bytes.count, bytes[footer] == UInt8(ascii: "\n"),
                let close = bytes[(footer + 1)...].firstIndex(of: UInt8(ascii: "\n"))
            {
                rule = PosixTimeZoneRule(String(decoding: bytes[(footer + 1)..<close], as: UTF8.self))
            }
        }
        guard types > 0 else { return nil }
        var transitions: [Int] = []
        var kindAtTransition: [Int] = []
        for index in 0..<times {
            guard let time = integer(start + index * timeSize, timeSize) else { return nil }
            transitions.append(time)
        }
        let indices = start + times * timeSize
        for index in 0..<times {
            guard indices + index < bytes.count, Int(bytes[indices + index]) < types else { return nil }
            kindAtTransition.append(Int(bytes[indices + index]))
        }
        let infos = indices + times
        let names = infos + types * 6
        guard names + chars <= bytes.count else { return nil }
        var kinds: [Kind] = []
        var initial: Int?
        for index in 0..<types {
            let at = infos + index * 6
            guard let offset = integer(at, 4) else { return nil }
            let isDaylight = bytes[at + 4] != 0
            var nameEnd = names + Int(bytes[at + 5])
            let nameStart = nameEnd
            while nameEnd < names + chars && bytes[nameEnd] != 0 { nameEnd += 1 }
            kinds.append(
                Kind(offset: offset, abbreviation: String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self)))
            if !isDaylight && initial == nil { initial = index }
        }
        return TimeZoneRules(
            name: name, transitions: transitions, kindAtTransition: kindAtTransition, kinds: kinds,
            initial: initial ?? 0, rule: rule)
    }
}

/// The bytes of a TZif file, read as its fields: big-endian signed integers and headers.
private struct TZifBytes {
    let bytes: [UInt8]

    /// The signed big-endian integer of `size` bytes at `at`; nil past the end.
    func integer(_ at: Int, _ size: Int) -> Int? {
        guard at >= 0, at + size <= bytes.count else { return nil }
        var value = 0
        for index in at..<at + size { value = value << 8 | Int(bytes[index]) }
        // Signed: the values are two's complement of `size` bytes.
        let bits = size * 8
        return value >= 1 << (bits - 1) ? value - (1 << bits) : value
    }

    /// The header at `at`: the version byte and the six counts (utc, std, leap, times, types, chars).
    func header(_ at: Int) -> (version: UInt8, counts: [Int])? {
        guard at + 44 <= bytes.count, bytes[at..<at + 4].elementsEqual("TZif".utf8) else { return nil }
        var counts: [Int] = []
        for index in 0..<6 {
            guard let count = integer(at + 20 + index * 4, 4), count >= 0 else { return nil }
            counts.append(count)
        }
        return (bytes[at + 4], counts)
    }
}
