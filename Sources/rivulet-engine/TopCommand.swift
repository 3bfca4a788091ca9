import ArgumentParser
import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline

/// `rivulet top HOST:PORT`: a live view of a run started with `--metrics HOST:PORT`, from its
/// `/stats`: one row a component with its rates and totals, refreshed every second; `q` quits.
struct TopCommand: ParsableCommand, HandlesStopSignals {
    /// The full-screen view gives the terminal back before a signal ends it.
    var handlesStopSignals: Bool { !once && FileHandleOutput.standardOutput.isTerminal }

    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Watch a running pipeline (started with --metrics HOST:PORT): rates, totals and errors per component."
    )

    @Argument(help: ArgumentHelp("The address the run's --metrics serves.", valueName: "host:port"))
    var address: String

    @Argument(
        help: ArgumentHelp(
            "Only these components: places (ops.2), streams' names (orders) or globs ('streams.*.source', '*debounce*').",
            valueName: "component"))
    var only: [String] = []

    @Flag(help: "Print one view (rates over one second) and exit; the default when standard output is not a terminal.")
    var once = false

    func validate() throws {
        if HTTPServerAddress.parse(address) == nil {
            throw ValidationError("top expects HOST:PORT, such as 127.0.0.1:9464; got '\(address)'")
        }
    }

    func run() throws {
        guard let (host, port) = HTTPServerAddress.parse(address) else { throw ExitCode(2) }
        let fetch = { () throws -> TopView.Snapshot in
            let body = try StatsClient.get(host: host, port: port, path: "/stats")
            guard let snapshot = TopView.Snapshot(json: body) else {
                throw StatsClient.Failure("\(address)/stats did not answer with a run's stats")
            }
            return snapshot
        }
        do {
            if once || !FileHandleOutput.standardOutput.isTerminal {
                let first = try fetch()
                Thread.sleep(forTimeInterval: 1)
                let second = try fetch()
                let lines = TopView.render(
                    previous: first, current: second, address: address, only: only.map(PlacePattern.init))
                FileHandleOutput.standardOutput.write(lines.joined(separator: "\n") + "\n")
                return
            }
            // Said once the terminal has its own screen back.
            if let ended = try watch(fetch) { RunLog.info(ended) }
        } catch let failure as StatsClient.Failure {
            RunLog.error("error: \(failure.message)")
            throw ExitCode(1)
        }
    }

    /// Redraws the view every second until `q` (or Ctrl-C) is typed, or the run goes away (what
    /// to say then is returned).
    private func watch(_ fetch: () throws -> TopView.Snapshot) throws -> String? {
        var saved = termios()
        let hasTerminalInput = tcgetattr(0, &saved) == 0
        if hasTerminalInput {
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
            tcsetattr(0, TCSANOW, &raw)
        }
        let output = FileHandleOutput.standardOutput
        output.write("\u{1B}[?1049h\u{1B}[?25l")  // the alternate screen, no cursor
        defer {
            output.write("\u{1B}[?25h\u{1B}[?1049l")
            if hasTerminalInput { tcsetattr(0, TCSANOW, &saved) }
        }
        var previous: TopView.Snapshot?
        // SIGINT and SIGTERM stay blocked and are looked for once a redraw, so the terminal is
        // given back (the defer above) before the process exits with 128 + the signal.
        while true {
            if let signal = SignalWatcher.takePendingStopSignal() { throw ExitCode(128 + signal) }
            let current: TopView.Snapshot
            do {
                current = try fetch()
            } catch let failure as StatsClient.Failure {
                if previous != nil { return "the run at \(address) has ended (\(failure.message))" }
                throw failure
            }
            let lines = TopView.render(
                previous: previous, current: current, address: address, only: only.map(PlacePattern.init))
            // Cut to the terminal's height, so that the title does not scroll away (a partitionBy's
            // table has a row a partition).
            var size = winsize()
            let rows = ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_row > 0 ? Int(size.ws_row) : nil
            let shown = TopView.fitted(lines, rows: rows)
            output.write("\u{1B}[H\u{1B}[2J" + shown.joined(separator: "\r\n") + "\r\n\r\nq quits")
            previous = current
            // Waits a second for a key; q or Ctrl-C quits.
            var poller = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 1000) > 0 {
                var byte: UInt8 = 0
                if read(0, &byte, 1) == 1, byte == UInt8(ascii: "q") || byte == 3 { return nil }
            }
        }
    }
}

/// What `top` shows: a pure function of two snapshots of `/stats`.
enum TopView {
    /// One `/stats` answer.
    struct Snapshot {
        struct Component {
            let place: String
            let component: String
            let elementsIn: Int?
            let elementsOut: Int?
            let errors: Int
            let ended: Bool
            /// What it counts by a label (`partition`): one table a label.
            let tables: [Table]
            /// Its metrics without a label (an eventTime's watermark), by name.
            let values: [String: Int]
        }

        /// A component's values by one label: a row a value of the label, a column a metric.
        struct Table {
            let label: String
            let columns: [String]
            let rows: [(name: String, values: [Int?])]

            init?(_ value: Value) {
                guard case .object(let fields) = value, case .string(let label)? = fields["label"],
                    let columns = fields["columns"]?.arrayValue, let rows = fields["rows"]?.arrayValue
                else { return nil }
                self.label = label
                self.columns = columns.compactMap(\.stringValue)
                self.rows = rows.compactMap { row in
                    guard let cells = row.arrayValue, let name = cells.first?.stringValue else { return nil }
                    return (name, cells.dropFirst().map(\.intValue))
                }
            }
        }

        /// An object's integer fields, by name.
        private static func integers(_ value: Value?) -> [String: Int] {
            var integers: [String: Int] = [:]
            for (name, field) in value?.objectValue ?? JSONObject() {
                if let integer = field.intValue { integers[name] = integer }
            }
            return integers
        }

        let pipeline: String
        let ready: Bool
        let uptime: Double
        let components: [Component]

        init?(json: [UInt8]) {
            guard case .object(let object)? = try? JSONParser.parse(json),
                case .string(let pipeline)? = object["pipeline"], case .array(let items)? = object["components"]
            else { return nil }
            self.pipeline = pipeline
            ready = object["ready"] == .bool(true)
            uptime = object["uptimeSeconds"]?.doubleValue ?? 0
            components = items.compactMap { item in
                guard case .object(let fields) = item, case .string(let place)? = fields["place"],
                    case .string(let component)? = fields["component"]
                else { return nil }
                return Component(
                    place: place, component: component, elementsIn: fields["in"]?.intValue,
                    elementsOut: fields["out"]?.intValue, errors: fields["errors"]?.intValue ?? 0,
                    ended: fields["ended"] == .bool(true),
                    tables: (fields["byLabel"]?.arrayValue ?? []).compactMap(Table.init),
                    values: Self.integers(fields["values"]))
            }
        }
    }

    /// The view: a title line, a header, one row a component (rates between the two snapshots);
    /// then, for a component that counts by a label (`partitionBy` by partition), a table of
    /// those; with `only`, the components those patterns mean.
    static func render(previous: Snapshot?, current: Snapshot, address: String, only: [PlacePattern] = [])
        -> [String]
    {
        let seconds = previous.map { current.uptime - $0.uptime } ?? 0
        func rate(_ now: Int?, _ before: Int?) -> String {
            guard let now else { return "-" }
            guard let before, seconds > 0 else { return "…" }
            return String(format: "%.1f", Double(now - before) / seconds)
        }
        let title =
            "rivulet top — \(current.pipeline) at \(address) — \(current.ready ? "ready" : "connecting") — up "
            + String(format: "%.1fs", current.uptime)
        var rows = [["PLACE", "COMPONENT", "IN/s", "OUT/s", "IN", "OUT", "ERRORS", "STATE"]]
        let shown = current.components.filter { component in
            only.isEmpty
                || only.contains(where: { $0.matches(place: component.place, component: component.component) })
        }
        for component in shown {
            let before = previous?.components.first { $0.place == component.place }
            rows.append([
                component.place, component.component, rate(component.elementsIn, before?.elementsIn),
                rate(component.elementsOut, before?.elementsOut), component.elementsIn.map(String.init) ?? "-",
                component.elementsOut.map(String.init) ?? "-", String(component.errors),
                component.ended ? "ended" : "running",
            ])
        }
        // Names to the left, numbers to the right.
        var lines = [title, ""] + aligned(rows, leftColumns: [0, 1, 7])
        lines += eventTimeLines(of: shown, previous: previous, rate: rate)
        lines += labelTableLines(of: shown, previous: previous, current: current, rate: rate)
        return lines
    }

    /// Each event-time stream of `shown`: its watermark, how far behind the wall clock, what it
    /// holds; nothing when there is none.
    private static func eventTimeLines(
        of shown: [Snapshot.Component], previous: Snapshot?, rate: (Int?, Int?) -> String
    ) -> [String] {
        let timed = shown.filter { $0.values["watermark_ms"] != nil || $0.values["event_time_waiting"] != nil }
        guard !timed.isEmpty else { return [] }
        var timeRows = [
            ["EVENT TIME", "COMPONENT", "WATERMARK", "BEHIND", "WAITING", "WINDOWS", "KEYS", "LATE/s", "LATE"]
        ]
        for component in timed {
            let before = previous?.components.first { $0.place == component.place }
            func shown(_ name: String) -> String {
                component.values[name].map { MetricTitles.text($0, MetricTitles.title(name).shown) } ?? "-"
            }
            timeRows.append([
                component.place, component.component,
                (component.values["watermark_ms"] ?? 0) == 0 ? "not started" : shown("watermark_ms"),
                shown("watermark_behind_ms"), shown("event_time_waiting"), shown("event_time_windows_open"),
                shown("event_time_keys_held"),
                rate(component.values["elements_late_total"] ?? 0, before?.values["elements_late_total"] ?? 0),
                String(component.values["elements_late_total"] ?? 0),
            ])
        }
        return [""] + aligned(timeRows, leftColumns: [0, 1, 2])
    }

    /// For each component of `shown` that counts by a label (`partitionBy` by partition), a
    /// titled table of those.
    private static func labelTableLines(
        of shown: [Snapshot.Component], previous: Snapshot?, current: Snapshot, rate: (Int?, Int?) -> String
    ) -> [String] {
        var lines: [String] = []
        for component in shown {
            let before = previous?.components.first { $0.place == component.place }
            for table in component.tables {
                let earlier = before?.tables.first { $0.label == table.label }
                lines += ["", "\(component.place) \(component.component) by \(table.label)"]
                // The same label's tables of every component: a partition's pending messages are
                // its source's, its watermark its eventTime's.
                let related = current.components.flatMap(\.tables).filter { $0.label == table.label }
                let relatedEarlier = (previous?.components ?? []).flatMap(\.tables).filter { $0.label == table.label }
                let tableRows = labelRows(
                    table, earlier: earlier, related: related, relatedEarlier: relatedEarlier, rate: rate)
                let notes: Set<Int> = tableRows[0].last == "NOTE" ? [0, tableRows[0].count - 1] : [0]
                lines += aligned(tableRows, leftColumns: notes)
            }
        }
        return lines
    }

    /// `lines` as they fit a terminal of `rows` rows below which `q quits` takes two: cut, the
    /// last line saying how many were left out.
    static func fitted(_ lines: [String], rows: Int?) -> [String] {
        guard let rows, rows > 4, lines.count + 2 > rows else { return lines }
        let kept = rows - 3
        return Array(lines.prefix(kept)) + [
            "… \(lines.count - kept) more lines: a taller terminal shows them, or name the components to show"
        ]
    }

    /// A table's rows under a header of plain titles (`MetricTitles`): a counter
    /// (`partition_elements_total`) as its rate and its total, a gauge as it is shown (a
    /// watermark as a time). With partitions' watermarks, a last column says which partition
    /// holds the stream's watermark back, and why it may: idle, not held here, messages pending.
    private static func labelRows(
        _ table: Snapshot.Table, earlier: Snapshot.Table?, related: [Snapshot.Table], relatedEarlier: [Snapshot.Table],
        rate: (Int?, Int?) -> String
    ) -> [[String]] {
        var header = [table.label.uppercased()]
        for column in table.columns {
            let (title, _) = MetricTitles.title(column, label: table.label)
            header += column.hasSuffix("_total") ? ["\(title)/s", title] : [title]
        }
        // The partition whose watermark is the least of those that have one.
        let watermarks = table.rows.compactMap { row in
            value(row.name, "partition_watermark_ms", in: [table]).map { (row.name, $0) }
        }
        let holdingBack = watermarks.filter { $0.1 > 0 }.min { $0.1 < $1.1 }?.0
        if !watermarks.isEmpty { header.append("NOTE") }
        var rows = [header]
        for row in table.rows {
            let before = earlier?.rows.first { $0.name == row.name }
            var cells = [row.name]
            for (index, column) in table.columns.enumerated() {
                let value = index < row.values.count ? row.values[index] : nil
                let earlierIndex = earlier?.columns.firstIndex(of: column)
                if column.hasSuffix("_total") {
                    let previous = earlierIndex.flatMap { index in
                        before.flatMap { index < $0.values.count ? $0.values[index] : nil }
                    }
                    cells.append(rate(value, previous))
                }
                let shown = MetricTitles.title(column, label: table.label).shown
                // A watermark of 0 is one not known yet (no element).
                let unknown = value == nil || (shown == .time && value == 0)
                cells.append(unknown ? "-" : MetricTitles.text(value!, shown))
            }
            if !watermarks.isEmpty {
                cells.append(
                    watermarkNote(
                        row.name, table: table, related: related, relatedEarlier: relatedEarlier,
                        holdingBack: holdingBack))
            }
            rows.append(cells)
        }
        return rows
    }

    /// The value of `column` for the row `name` in any of `tables`.
    private static func value(_ name: String, _ column: String, in tables: [Snapshot.Table]) -> Int? {
        for table in tables {
            guard let index = table.columns.firstIndex(of: column),
                let row = table.rows.first(where: { $0.name == name }), index < row.values.count
            else { continue }
            return row.values[index]
        }
        return nil
    }

    /// What a partition's row notes of its watermark: idle, not held here, no element yet, or
    /// that it holds the stream's watermark back (`holdingBack`), and why.
    private static func watermarkNote(
        _ name: String, table: Snapshot.Table, related: [Snapshot.Table], relatedEarlier: [Snapshot.Table],
        holdingBack: String?
    ) -> String {
        var notes: [String] = []
        if value(name, "nats_partition_held", in: related) == 0 { notes.append("not held here") }
        if value(name, "partition_idle", in: related) == 1 { notes.append("idle") }
        if (value(name, "partition_watermark_ms", in: [table]) ?? 0) == 0 { notes.append("no element yet") }
        if name == holdingBack {
            var why = "holds the watermark back"
            let read = value(name, "partition_elements_total", in: related)
            let readBefore = value(name, "partition_elements_total", in: relatedEarlier)
            if let pending = value(name, "nats_partition_pending", in: related), pending > 0 {
                why += " (behind: \(pending) messages pending)"
            } else if let read, let readBefore, read == readBefore {
                why += " (quiet: nothing read for a second)"
            }
            notes.append(why)
        }
        return notes.joined(separator: "; ")
    }

    /// `rows` in columns two spaces apart: those in `leftColumns` to the left, the rest to the right.
    private static func aligned(_ rows: [[String]], leftColumns: Set<Int>) -> [String] {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return leftColumns.contains(column) ? cell + pad : pad + cell
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
    }
}
