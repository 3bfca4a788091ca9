import Reactive

/// Durations as pipeline files write them: `250ms`, `1.5s`, `2m`, `1h`, `100us`.
public enum DurationSyntax {
    /// The duration `text` means, or nil.
    public static func parse(_ text: String) -> RxTimeInterval? {
        let trimmed = text.trimming { $0 == " " }
        let units: [(String, Double)] = [("ms", 1e6), ("us", 1e3), ("ns", 1), ("s", 1e9), ("m", 60e9), ("h", 3600e9)]
        for (unit, nanosecondsPerUnit) in units where trimmed.hasSuffix(unit) {
            let number = trimmed.dropLast(unit.count)
            guard !number.isEmpty, number.allSatisfy({ "0123456789.".contains($0) }), let amount = Double(number) else {
                return nil
            }
            return .nanoseconds(Int64((amount * nanosecondsPerUnit).rounded()))
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
