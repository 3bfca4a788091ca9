import Synchronization

/// What each `table` sink shows, kept for the live view of a run (`run --ui`): its columns and
/// rows as text, by the sink's place. A sink finds it among the run's services and writes to it
/// on the pipeline's thread; the view's server reads a copy from its own.
public final class LiveTables: Sendable {
    /// One sink's table.
    public struct Table: Sendable, Equatable {
        /// The sink's place in the file (`sink`, `sinks.1`).
        public var place: String
        /// The column titles.
        public var columns: [String]
        /// The rows, each a cell a column, as text.
        public var rows: [[String]]
    }

    /// How many appended rows are kept (the newest).
    public static let rowLimit = 200
    private let tables = Mutex<[Table]>([])

    /// None yet.
    public init() {}

    /// Every table, in the order the sinks first wrote.
    public var snapshot: [Table] { tables.withLock { $0 } }

    /// The table at `place` now shows `rows` (a sink given the whole list each time).
    func replace(_ place: String, columns: [String], rows: [[String]]) {
        update(place, columns: columns) { $0 = Array(rows.prefix(Self.rowLimit)) }
    }

    /// `row` is added to the table at `place` (a sink given one row at a time).
    func append(_ place: String, columns: [String], row: [String]) {
        update(place, columns: columns) { rows in
            rows.append(row)
            if rows.count > Self.rowLimit { rows.removeFirst(rows.count - Self.rowLimit) }
        }
    }

    private func update(_ place: String, columns: [String], _ change: (inout [[String]]) -> Void) {
        tables.withLock { tables in
            if let index = tables.firstIndex(where: { $0.place == place }) {
                tables[index].columns = columns
                change(&tables[index].rows)
            } else {
                var rows: [[String]] = []
                change(&rows)
                tables.append(Table(place: place, columns: columns, rows: rows))
            }
        }
    }
}
