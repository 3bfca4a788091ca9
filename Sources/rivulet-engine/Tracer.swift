@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// `--trace`: prints each event as it happens, then a marble timeline per source and operator.
final class Tracer {
    private var order: [String] = []
    private var events: [String: [(time: RxTime, event: Event<Value>)]] = [:]

    func record(_ trace: TraceEvent) {
        if events[trace.label] == nil { order.append(trace.label) }
        events[trace.label, default: []].append((trace.time, trace.event))
        let time = Self.milliseconds(trace.time)
        let what: String
        switch trace.event {
        case .next(let value):
            // Masked before it is cut: a secret cut short would no longer be recognised.
            var text = Secrets.shared.redact(value.description)
            if text.count > 120 { text = String(text.prefix(117)) + "..." }
            what = "next \(text)"
        case .error(let error): what = "error \(error)"
        case .completed: what = "completed"
        }
        RunLog.info("trace \(time.padded(10)) \(trace.label): \(what)")
    }

    static func milliseconds(_ time: RxTime) -> String {
        let value = Double(time.totalNanoseconds) / 1e6
        return (value * 10).rounded() / 10 == value.rounded()
            ? "\(Int(value.rounded()))ms" : "\(((value * 10).rounded()) / 10)ms"
    }

    /// One line per component: `-` for quiet time, `o` an element (`8` several in one column),
    /// `|` completion, `#` an error, across the run's duration.
    func printTimelines() {
        guard !order.isEmpty else { return }
        let end = events.values.flatMap { $0.map(\.time) }.max() ?? .zero
        let columns = 60
        let span = max(end.totalNanoseconds, 1)
        let width = order.map(\.count).max() ?? 0
        var lines = [
            "timeline 0ms .. \(Self.milliseconds(end)) (\(Self.milliseconds(.nanoseconds(span / Int64(columns)))) a column)"
        ]
        for label in order {
            var row = Array(repeating: Character("-"), count: columns + 1)
            for (time, event) in events[label] ?? [] {
                var column = Int(time.totalNanoseconds * Int64(columns) / span)
                switch event {
                case .next:
                    row[column] = row[column] == "-" ? "o" : "8"
                case .completed, .error:
                    // A terminal event in a column holding an element goes just after it, so both show.
                    if row[column] != "-" && column < columns { column += 1 }
                    row[column] = event.isStopEvent && event.error == nil ? "|" : "#"
                }
            }
            lines.append("\(label.padded(width, left: false))  \(String(row))")
        }
        RunLog.info(lines.joined(separator: "\n"))
    }
}

extension String {
    func padded(_ width: Int, left: Bool = true) -> String {
        let padding = String(repeating: " ", count: max(0, width - count))
        return left ? padding + self : self + padding
    }
}
