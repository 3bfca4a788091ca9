import Foundation

/// How `rivulet top` and the live view (`--ui`) name a component's metrics and show their values:
/// plain titles (`WATERMARK`, `BEHIND`), times and durations as people read them, not raw metric
/// names and milliseconds.
enum MetricTitles {
    /// How a value is shown.
    enum Shown: String {
        /// As it is: a count.
        case number
        /// Milliseconds since the epoch, as a UTC time (`2001-09-09T01:46:49.000Z`).
        case time
        /// Milliseconds, as a duration (`1.5s`, `3m04s`).
        case duration
        /// Bytes (`12B`, `1.5KiB`).
        case bytes
        /// 1 or 0, as `yes` or `no`.
        case flag
    }

    /// The title and the way to show the metric `name` (its table's `label` prefix, such as
    /// `partition_`, left out); a counter (`_total`) is titled by what it counts, and `top` shows
    /// it as a rate and a total.
    static func title(_ name: String, label: String? = nil) -> (title: String, shown: Shown) {
        if let known = known[name] { return known }
        var plain = name
        if let label, plain.hasPrefix(label + "_") { plain.removeFirst(label.count + 1) }
        if plain.hasSuffix("_total") { plain.removeLast("_total".count) }
        return (plain.replacingOccurrences(of: "_", with: " ").uppercased(), .number)
    }

    private static let known: [String: (title: String, shown: Shown)] = [
        "watermark_ms": ("WATERMARK", .time),
        "watermark_behind_ms": ("BEHIND", .duration),
        "event_time_waiting": ("WAITING", .number),
        "event_time_windows_open": ("WINDOWS", .number),
        "event_time_keys_held": ("KEYS", .number),
        "elements_late_total": ("LATE", .number),
        "elements_ahead_total": ("AHEAD", .number),
        "partition_watermark_ms": ("WATERMARK", .time),
        "partition_watermark_behind_ms": ("BEHIND", .duration),
        "partition_idle": ("IDLE", .flag),
        "partition_elements_total": ("ELEMENTS", .number),
        "partition_lag": ("QUEUED", .number),
        "partition_state_bytes": ("STATE", .bytes),
        "nats_partition_held": ("HELD", .flag),
        "nats_partition_pending": ("PENDING", .number),
        "nats_pending_acks": ("UNACKED", .number),
    ]

    /// `value` shown as `shown` says.
    static func text(_ value: Int, _ shown: Shown) -> String {
        switch shown {
        case .number: return String(value)
        case .flag: return value != 0 ? "yes" : "no"
        case .bytes:
            // No space inside: a row splits into its columns at spaces.
            if value < 1024 { return "\(value)B" }
            if value < 1 << 20 { return String(format: "%.1fKiB", Double(value) / 1024) }
            return String(format: "%.1fMiB", Double(value) / Double(1 << 20))
        case .duration: return duration(milliseconds: value)
        case .time:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.string(from: Date(timeIntervalSince1970: Double(value) / 1000))
        }
    }

    /// `1.5s`, `3m04s`, `2h05m`, `3d04h`: two units at most, the larger first.
    static func duration(milliseconds: Int) -> String {
        let seconds = milliseconds / 1000
        if seconds < 60 { return String(format: "%.1fs", Double(milliseconds) / 1000) }
        if seconds < 3600 { return String(format: "%dm%02ds", seconds / 60, seconds % 60) }
        if seconds < 86_400 { return String(format: "%dh%02dm", seconds / 3600, seconds % 3600 / 60) }
        return String(format: "%dd%02dh", seconds / 86_400, seconds % 86_400 / 3600)
    }
}
