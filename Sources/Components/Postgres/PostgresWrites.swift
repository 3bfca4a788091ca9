import Postgres

/// The statements the `postgres` sink runs for a batch of rows, in the order the rows came:
/// consecutive inserts as one COPY (straight into the table, or with a key or ids into a
/// session's staging table, then one INSERT … SELECT … ON CONFLICT), consecutive deletes as one
/// DELETE. Pure: rows in, SQL, parameters and rows to copy out.
struct PostgresWrites {
    /// The table, quoted (`"public"."orders"` for `public.orders`).
    let table: String
    /// The columns written, in order (the id column last, when there is one).
    let columns: [String]
    /// The columns that identify a row (an upsert's conflict target, a delete's match).
    let key: [String]
    /// The column holding each row's derived id, when rows have one.
    let idColumn: String?

    /// The most parameters one statement may bind (the protocol counts them in 16 bits).
    static let parameterLimit = 65_535

    init(table: String, columns: [String], key: [String], idColumn: String?) {
        self.table = table.split(separator: ".").map { PostgresConnection.quote(String($0)) }.joined(separator: ".")
        self.columns = columns
        self.key = key
        self.idColumn = idColumn
    }

    /// One row to write: its values in `columns` order, and whether it deletes its key instead.
    struct Row {
        var values: [String?]
        var deletes: Bool
    }

    /// One statement to run: with `copying`, a `COPY … FROM STDIN` that is sent those rows.
    struct Statement: Equatable {
        let sql: String
        var parameters: [String?] = []
        var copying: [[String?]]? = nil
    }

    /// The temporary table (one a connection) rows with a key or ids are copied into first.
    static let staging = PostgresConnection.quote("rivulet_staged_rows")

    /// The statements that write `rows` in order. Within a run of upserts (or deletes) a key
    /// written twice keeps its last row only: a statement may not touch one row twice.
    func statements(for rows: [Row]) -> [Statement] {
        var statements: [Statement] = []
        var start = 0
        while start < rows.count {
            let deletes = rows[start].deletes
            var end = start
            while end < rows.count, rows[end].deletes == deletes { end += 1 }
            let run = deduplicated(Array(rows[start..<end]))
            statements += deletes ? deleteStatements(run) : copyStatements(run)
            start = end
        }
        return statements
    }

    /// The statement that writes one row with bound parameters (used to find the row a batch's
    /// failure came from).
    func statement(for row: Row) -> Statement {
        row.deletes ? deleteStatements([row])[0] : insertStatements([row])[0]
    }

    private var keyIndexes: [Int] { key.compactMap { columns.firstIndex(of: $0) } }

    private func deduplicated(_ rows: [Row]) -> [Row] {
        guard !key.isEmpty, rows.count > 1 else { return rows }
        let indexes = keyIndexes
        var last: [[String?]: Int] = [:]
        for (position, row) in rows.enumerated() { last[indexes.map { row.values[$0] }] = position }
        return rows.enumerated().filter { entry in last[indexes.map { entry.element.values[$0] }] == entry.offset }
            .map(\.element)
    }

    /// Inserts as COPY: into the table itself when nothing can conflict; else into the staging
    /// table (made once a session, with the written columns' types, emptied first), then moved
    /// into the table by one INSERT that upserts or skips what is there.
    private func copyStatements(_ rows: [Row]) -> [Statement] {
        let names = columns.map(PostgresConnection.quote).joined(separator: ", ")
        let values = rows.map(\.values)
        let conflicts = conflictClause
        if conflicts.isEmpty {
            return [Statement(sql: "COPY \(table) (\(names)) FROM STDIN", copying: values)]
        }
        return [
            Statement(
                sql:
                    "CREATE TEMPORARY TABLE IF NOT EXISTS \(Self.staging) AS SELECT \(names) FROM \(table) WITH NO DATA"
            ),
            Statement(sql: "TRUNCATE \(Self.staging)"),
            Statement(sql: "COPY \(Self.staging) (\(names)) FROM STDIN", copying: values),
            Statement(sql: "INSERT INTO \(table) (\(names)) SELECT \(names) FROM \(Self.staging)\(conflicts)"),
        ]
    }

    /// Inserts as multi-row INSERTs with bound parameters.
    private func insertStatements(_ rows: [Row]) -> [Statement] {
        let perStatement = max(1, Self.parameterLimit / max(1, columns.count))
        let names = columns.map(PostgresConnection.quote).joined(separator: ", ")
        return stride(from: 0, to: rows.count, by: perStatement).map { first in
            let chunk = rows[first..<min(rows.count, first + perStatement)]
            var placeholders: [String] = []
            var parameters: [String?] = []
            parameters.reserveCapacity(chunk.count * columns.count)
            for row in chunk {
                let base = parameters.count
                placeholders.append("(" + (1...columns.count).map { "$\(base + $0)" }.joined(separator: ", ") + ")")
                parameters += row.values
            }
            return Statement(
                sql: "INSERT INTO \(table) (\(names)) VALUES \(placeholders.joined(separator: ", "))\(conflictClause)",
                parameters: parameters)
        }
    }

    /// With a key, a row replaces the one with its key; without one but with ids, a row whose id
    /// is already there (a message delivered again) is not inserted again.
    private var conflictClause: String {
        if !key.isEmpty {
            let keyList = key.map(PostgresConnection.quote).joined(separator: ", ")
            let others = columns.filter { !key.contains($0) }.map(PostgresConnection.quote)
            guard !others.isEmpty else { return " ON CONFLICT (\(keyList)) DO NOTHING" }
            return " ON CONFLICT (\(keyList)) DO UPDATE SET "
                + others.map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        }
        if let idColumn { return " ON CONFLICT (\(PostgresConnection.quote(idColumn))) DO NOTHING" }
        return ""
    }

    private func deleteStatements(_ rows: [Row]) -> [Statement] {
        let indexes = keyIndexes
        let perStatement = max(1, Self.parameterLimit / max(1, indexes.count))
        let target =
            indexes.count == 1
            ? PostgresConnection.quote(key[0]) : "(" + key.map(PostgresConnection.quote).joined(separator: ", ") + ")"
        return stride(from: 0, to: rows.count, by: perStatement).map { first in
            let chunk = rows[first..<min(rows.count, first + perStatement)]
            var items: [String] = []
            var parameters: [String?] = []
            for row in chunk {
                let base = parameters.count
                let placeholders = (1...indexes.count).map { "$\(base + $0)" }
                items.append(indexes.count == 1 ? placeholders[0] : "(" + placeholders.joined(separator: ", ") + ")")
                parameters += indexes.map { row.values[$0] }
            }
            return Statement(
                sql: "DELETE FROM \(table) WHERE \(target) IN (\(items.joined(separator: ", ")))",
                parameters: parameters)
        }
    }

    /// The CREATE TABLE for a table that is missing, each column typed by its first value.
    func createTable(types: [String]) -> String {
        var definitions = zip(columns, types).map { "\(PostgresConnection.quote($0)) \($1)" }
        if !key.isEmpty {
            definitions.append("PRIMARY KEY (" + key.map(PostgresConnection.quote).joined(separator: ", ") + ")")
        }
        if let idColumn { definitions.append("UNIQUE (\(PostgresConnection.quote(idColumn)))") }
        return "CREATE TABLE IF NOT EXISTS \(table) (\(definitions.joined(separator: ", ")))"
    }
}
