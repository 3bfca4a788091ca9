@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let columns = Parameter<[Value]>(
        "columns", doc: "The columns: field names, or {title, value, width}.",
        example: "[title, date, { title: URL, value: .web_url, width: 40 }]")
    static let maxRows = Parameter<Int>("maxRows", default: 20, doc: "The most rows shown of a list.")
    static let maxWidth = Parameter<Int?>(
        "maxWidth", doc: "The widest the table may be (default: the terminal's width, or 120 piped).")
    static let empty = Parameter<String>("empty", default: "(no results)", doc: "What an empty list shows.")
    static let key = Parameter<[Expression]?>(
        "key",
        doc:
            "What identifies a row: an element whose key a shown row has replaces that row (a window emitted again with update: true). Default: [.key, .start] for elements that have both, as aggregate writes them; otherwise none.",
        example: "[.route, .minute]")
}

extension BuiltinComponents {
    /// `table` — a terminal table of chosen columns.
    public static let table = ComponentSpec(
        name: "table",
        summary: "Shows elements as a table: a list replaces the table (redrawn in place), objects add rows.",
        docs: """
            Each column is a field name, or {title, value, width} with an expression. Widths count East \
            Asian wide characters as two columns, so Japanese titles line up; long cells are cut with an \
            ellipsis. When an element is a list, the table shows that list and, on a terminal, redraws it \
            in place (the table view bound to the latest search results); other elements add a row each. \
            Piped, it prints plain rows with no escape codes. No column is wider than maxWidth, \
            whatever its width says. An element whose key (key, or an aggregate's key and start) matches \
            a row shown already replaces it, on the terminal and in the live view (run --ui), as a \
            window updated by late data should; piped, the new row is printed below.
            """,
        parameters: [Key.columns, Key.maxRows, Key.maxWidth, Key.empty, Key.key],
        primary: Key.columns,
        example: "sink: { table: { columns: [title, date, url] } }",
        validate: { values, validation in
            for value in values[Key.columns] {
                switch value {
                case .string: continue
                case .object(let object)
                where object["value"]?.stringValue != nil || object["title"]?.stringValue != nil:
                    if let text = object["value"]?.stringValue {
                        do { _ = try Expression(text) } catch {
                            validation.error("column value '\(text)': \(error)", at: Key.columns, in: values)
                        }
                    }
                    if let width = object["width"], (width.intValue ?? 0) < 1 {
                        validation.error(
                            "a column's width must be a whole number of at least 1", at: Key.columns, in: values)
                    }
                default:
                    validation.error(
                        "a column is a field name or {title, value, width}, got \(value)", at: Key.columns, in: values)
                }
            }
            if values[Key.maxRows] < 0 { validation.error("maxRows must be 0 or more", at: Key.maxRows, in: values) }
            if let width = values[Key.maxWidth], width < 1 {
                validation.error("maxWidth must be at least 1", at: Key.maxWidth, in: values)
            }
        },
        checkpointing: .stateless,
        delivery: Delivery(.atMostOnce, "a display: it shows what it received"),
        elementErrors: true,
        factory: .sink { parameters, context in
            try TableSink(parameters: parameters, context: context)
        })
}

final class TableSink: PipelineSink {
    struct Column {
        let title: String
        let value: Expression
        let width: Int?
    }

    private let columns: [Column]
    private let maxRows: Int
    private let maxWidth: Int
    private let emptyText: String
    private let screen: Screen
    private let output: StandardOutput
    private let scope: EvaluationScope
    private let context: ComponentContext
    private var appendWidths: [Int]?
    /// What identifies a row, if the file says (else an aggregate's key and start).
    private let key: [Expression]?
    /// The rows added one at a time, newest last (at most `LiveTables.rowLimit`), each with its key.
    private var appended: [(key: Value?, cells: [String])] = []
    /// The live view's copy of the table (`run --ui`), and the sink's place there.
    private let live: (tables: LiveTables, place: String)?

    init(parameters: ParameterValues, context: ComponentContext) throws {
        self.context = context
        live = context.existing(LiveTables.self).map { ($0, context.meter?.place ?? context.componentName) }
        scope = context.makeScope()
        let output = context.shared(StandardOutput.self) { StandardOutput() }
        self.output = output
        screen = context.shared(Screen.self) { Screen(output: output) }
        maxRows = parameters[Key.maxRows]
        key = parameters[Key.key]
        emptyText = parameters[Key.empty]
        maxWidth = parameters[Key.maxWidth] ?? (screen.isTerminal ? screen.size.columns : 120)
        columns = try parameters[Key.columns].map { value in
            if case .string(let name) = value {
                return Column(title: name, value: try Expression(".[\"\(name)\"]"), width: nil)
            }
            let title = value["title"]?.stringValue ?? value["value"]?.stringValue ?? "value"
            let expression = try Expression(value["value"]?.stringValue ?? ".[\"\(title)\"]")
            return Column(title: title, value: expression, width: value["width"]?.intValue)
        }
    }

    private func cells(_ element: Value) throws -> [String] {
        try columns.map { column in
            let value = try context.evaluate(column.value, element, in: scope)
            // Masked before a column's width cuts it: a secret cut short would no longer be recognised.
            switch value {
            case .null: return ""
            case .string(let text): return Secrets.shared.redact(text.replacing("\n", with: " "))
            default: return Secrets.shared.redact(value.description)
            }
        }
    }

    /// Each column's width: its own, or its widest cell (at least `least`), then the widest
    /// narrowed until the table fits maxWidth.
    private func widths(header: [String], rows: [[String]], least: Int = 1) -> [Int] {
        // No column is wider than the table may be (width: 100000000 wrote 100 MB of padding a row).
        var widths = columns.indices.map { index in
            min(
                maxWidth,
                columns[index].width
                    ?? max(least, ([header[index]] + rows.map { $0[index] }).map(DisplayWidth.of).max() ?? 1))
        }
        let separator = 2 * max(0, columns.count - 1)
        // Shrink the widest column until the table fits.
        while widths.reduce(0, +) + separator > maxWidth,
            let widest = widths.indices.max(by: { widths[$0] < widths[$1] }),
            widths[widest] > 4
        {
            widths[widest] -= 1
        }
        return widths
    }

    private func line(_ cells: [String], _ widths: [Int]) -> String {
        var parts: [String] = []
        for (index, cell) in cells.enumerated() {
            let text = DisplayWidth.truncate(cell, to: widths[index])
            parts.append(index == cells.count - 1 ? text : DisplayWidth.pad(text, to: widths[index]))
        }
        return parts.joined(separator: "  ")
    }

    private func rule(_ widths: [Int]) -> String {
        widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
    }

    func receive(_ event: Event<Value>) throws {
        guard case .next(let element) = event else { return }
        try output.check(context)
        if case .array(let items) = element {
            let rows = try items.prefix(maxRows).compactMap { item in try context.handling(item, { try cells(item) }) }
            let header = columns.map(\.title)
            live?.tables.replace(live!.place, columns: header, rows: rows)
            let widths = widths(header: header, rows: rows)
            var lines = [line(header, widths), rule(widths)] + rows.map { line($0, widths) }
            if items.isEmpty { lines.append(emptyText) }
            if items.count > maxRows {
                let held = items.count - maxRows
                lines.append(
                    "… \(held) more row\(held == 1 ? "" : "s") held back (maxRows: \(maxRows)); raise maxRows to show them"
                )
            }
            if screen.isTerminal {
                screen.setBody(lines)
            } else {
                for text in lines { output.writeLine(text, scheduler: context.scheduler) }
                output.writeLine("", scheduler: context.scheduler)
            }
            return
        }
        guard let row = try context.handling(element, { try cells(element) }) else { return }
        var lines: [String] = []
        if appendWidths == nil {
            let header = columns.map(\.title)
            // Later rows cannot widen a column already printed: leave room beyond the first row.
            let widths = widths(header: header, rows: [row], least: 16)
            appendWidths = widths
            lines += [line(header, widths), rule(widths)]
        }
        let rowKey = try context.handling(element, { try identity(of: element) }) ?? nil
        if let rowKey, let index = appended.lastIndex(where: { $0.key == rowKey }) {
            // The row shown for this key is replaced where it is.
            appended[index].cells = row
            live?.tables.replace(live!.place, columns: columns.map(\.title), rows: appended.map(\.cells))
            if screen.isTerminal {
                let header = columns.map(\.title)
                let widths = appendWidths!
                let room = max(1, screen.size.rows - 4)
                screen.setBody(
                    [line(header, widths), rule(widths)] + appended.suffix(room).map { line($0.cells, widths) })
                return
            }
        } else {
            appended.append((rowKey, row))
            if appended.count > LiveTables.rowLimit { appended.removeFirst(appended.count - LiveTables.rowLimit) }
            live?.tables.append(live!.place, columns: columns.map(\.title), row: row)
        }
        lines.append(line(row, appendWidths!))
        if screen.isTerminal {
            screen.appendBody(lines)
        } else {
            for text in lines { output.writeLine(text, scheduler: context.scheduler) }
        }
    }

    /// What identifies `element`'s row: its `key` values, or an aggregate's key and start.
    private func identity(of element: Value) throws -> Value? {
        if let key {
            return .array(try key.map { try context.evaluate($0, element, in: scope) })
        }
        guard let group = element["key"], let start = element["start"] else { return nil }
        return .array([group, start])
    }

    func close() throws {
        output.flush()
        screen.finish()
        try output.check(context)
    }
}
