import Reactive

/// Durations as pipeline files write them: `250ms`, `1.5s`, `2m`, `1h`, `100us`.
@_spi(Components) public enum DurationSyntax {
    /// The longest duration a file may write, 100,000 hours (about 11 years): far beyond any
    /// timer's use, and far from where a deadline (now + duration) would overflow.
    public static let maximum: RxTimeInterval = .seconds(100_000 * 3600)

    /// The duration `text` means, or nil (also for one longer than `maximum`).
    public static func parse(_ text: String) -> RxTimeInterval? {
        guard let nanoseconds = nanoseconds(text), nanoseconds <= Double(maximum.totalNanoseconds) else { return nil }
        return .nanoseconds(Int64(nanoseconds))
    }

    /// Why `text` is not a duration, as the end of a message: a missing unit, the limit, or how
    /// durations are written.
    public static func hint(for text: String) -> String {
        let trimmed = text.trimming { $0 == " " }
        if Double(trimmed) != nil { return "; add a unit: \(trimmed)ms or \(trimmed)s" }
        if nanoseconds(text) != nil { return "; the longest is 100000h" }
        return "; write it like 250ms, 1.5s, 2m or 1h"
    }

    /// The nanoseconds `text` writes, whatever their size (nil when it is not a number and a unit).
    static func nanoseconds(_ text: String) -> Double? {
        let trimmed = text.trimming { $0 == " " }
        let units: [(String, Double)] = [("ms", 1e6), ("us", 1e3), ("ns", 1), ("s", 1e9), ("m", 60e9), ("h", 3600e9)]
        for (unit, nanosecondsPerUnit) in units where trimmed.hasSuffix(unit) {
            let number = trimmed.dropLast(unit.count)
            guard !number.isEmpty, number.allSatisfy({ "0123456789.".contains($0) }), let amount = Double(number) else {
                return nil
            }
            return (amount * nanosecondsPerUnit).rounded()
        }
        return nil
    }

    /// `500ms`, `1.5s`, `2m`: the shortest way to write a duration.
    public static func format(_ duration: RxTimeInterval) -> String {
        let nanoseconds = duration.totalNanoseconds
        if nanoseconds % 60_000_000_000 == 0 && nanoseconds >= 60_000_000_000 {
            return "\(nanoseconds / 60_000_000_000)m"
        }
        if nanoseconds % 1_000_000_000 == 0 && nanoseconds > 0 { return "\(nanoseconds / 1_000_000_000)s" }
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000)ms" }
        return "\(Double(nanoseconds) / 1e6)ms"
    }

    /// A duration for people, rounded: `167ms` under a second, `1.2s` above (a jittered
    /// backoff's nanoseconds say nothing to a reader).
    public static func approximate(_ duration: RxTimeInterval) -> String {
        let milliseconds = (max(0, duration.totalNanoseconds) + 500_000) / 1_000_000
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        // A minute and more: whole seconds, written as a file would (60m, 1m30s → 90s).
        if milliseconds >= 60_000 { return format(.seconds((milliseconds + 500) / 1000)) }
        let tenths = (milliseconds + 50) / 100
        return tenths % 10 == 0 ? "\(tenths / 10)s" : "\(tenths / 10).\(tenths % 10)s"
    }
}

extension StringProtocol {
    /// The text without leading and trailing characters for which `isTrimmed` holds.
    public func trimming(_ isTrimmed: (Character) -> Bool) -> SubSequence {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
