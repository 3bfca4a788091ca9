@_spi(Components) import Pipeline
@_spi(Components) import Reactive
import SQLite

private enum Key {
    static let path = Parameter<String>(
        "path", doc: "The database file, relative to the pipeline file; created if missing.", example: "out/orders.db")
    static let table = Parameter<String>("table", doc: "The table rows go to; created if missing.", example: "orders")
    static let columns = Parameter<[String]?>(
        "columns", doc: "The fields written, in order (default: the keys of the first element).",
        example: "[id, customer, total]")
    static let key = Parameter<[String]?>(
        "key", doc: "Columns that identify a row: a row with the same key is replaced in place (an upsert).",
        example: "[id]")
    static let batchCount = Parameter<Int>(
        "count", default: 100, doc: "Rows per transaction at most.", example: "500"
    ).atLeast(1)
    static let batchPeriod = Parameter<RxTimeInterval>(
        "period", default: .seconds(1), doc: "The longest a written row waits for its transaction to commit."
    ).above(RxTimeInterval.zero)
    static let batch = Parameter<ParameterValues?>.object(
        "batch", [batchCount, batchPeriod], doc: "How rows are grouped into transactions.",
        example: "{ count: 500, period: 2s }")
}

extension BuiltinComponents {
    /// `sqlite: {path, table}` — writes elements as rows of an SQLite table.
    public static let sqliteSink = ComponentSpec(
        name: "sqlite",
        summary: "Writes elements as rows of an SQLite table, batched in transactions, optionally upserted by key.",
        docs: """
            Each element is an object; its fields named by columns (default: the first element's keys) \
            are written to the columns of the same names, a missing field as NULL, others ignored. The \
            table is created if missing, each column's type taken from the first element's value: an \
            integer or a boolean (1/0) INTEGER, another number REAL, a string TEXT, an object or list \
            TEXT holding its JSON, null no type. With key, a row whose key columns match an existing \
            row replaces that row's other columns (INSERT ... ON CONFLICT DO UPDATE; the key gets a \
            unique index); without it every element is a new row, so a second run appends. Rows are \
            written in transactions of batch.count rows, committed at the latest batch.period after \
            their first row and when the pipeline ends, so a run that is killed loses at most the \
            rows of the open transaction, never half a row. A database locked by another program is \
            waited for up to busyTimeout, then the run fails saying so. A row the database refuses \
            (a constraint, an element that is not an object) fails the run, or with onError is \
            skipped or reported on ID.errors.
            """,
        parameters: [Key.path, Key.table, Key.columns, Key.key, Key.batch, SQLiteAccess.busyTimeout],
        example: "sink: { sqlite: { path: out/orders.db, table: orders, key: [id] } }",
        validate: { values, validation in
            validation.requireFolder(Key.path, in: values, writing: "a database")
            if let key = values[Key.key], let columns = values[Key.columns] {
                for name in key where !columns.contains(name) {
                    validation.error(
                        "key column '\(name)' is not among the columns", at: Key.key, in: values,
                        note: "columns: \(columns.joined(separator: ", "))")
                }
            }
        },
        checkpointing: .depending(
            "keeps nothing: each checkpoint first commits its open transaction; the rows written after the last "
                + "checkpoint are written again on restart: with key they replace themselves (exactly-once), "
                + "without key they are appended again (at-least-once)"
        ) { values in
            values.has(Key.key)
                ? .stateless
                : .restartsWork(
                    "the rows written after the last checkpoint, which are appended again (give key to replace them)")
        },
        delivery: Delivery(
            .atLeastOnce,
            "rows are committed in transactions, never half a row; a killed run loses the open transaction's rows, which a durable source delivers again; with key a repeat replaces its row (exactly-once per key)"
        ),
        elementErrors: true,
        factory: .sink { parameters, context in
            let batch = parameters[Key.batch]
            return SQLiteSink(
                path: context.resolvePath(parameters[Key.path]), table: parameters[Key.table],
                columns: parameters[Key.columns], key: parameters[Key.key] ?? [],
                batchCount: batch?[Key.batchCount] ?? 100, batchPeriod: batch?[Key.batchPeriod] ?? .seconds(1),
                busyTimeout: parameters[SQLiteAccess.busyTimeout], context: context)
        })
}

/// The `sqlite` sink: opens the database at the first element, writes each row at once inside an
/// open transaction, and commits by count, by period and at the end. The messages behind the rows
/// are kept until their transaction is committed (`OriginKeepingSink`).
final class SQLiteSink: AsynchronousSink, OriginKeepingSink {
    private let path: String
    private let table: String
    private var columns: [String]?
    private let key: [String]
    private let batchCount: Int
    private let batchPeriod: RxTimeInterval
    private let busyTimeout: RxTimeInterval
    private let context: ComponentContext
    private var database: SQLiteDatabase?
    private var insert = ""
    private var pending = 0
    /// The messages behind the rows of the open transaction.
    private var uncommitted: [Origin] = []
    private let commitTimer = SerialDisposable()

    init(
        path: String, table: String, columns: [String]?, key: [String], batchCount: Int, batchPeriod: RxTimeInterval,
        busyTimeout: RxTimeInterval, context: ComponentContext
    ) {
        self.path = path
        self.table = table
        self.columns = columns
        self.key = key
        self.batchCount = batchCount
        self.batchPeriod = batchPeriod
        self.busyTimeout = busyTimeout
        self.context = context
        // A checkpoint moves the sources on past these rows: they must be in the database first.
        context.keepState { [weak self] in
            try self?.commit()
            return .null
        }
    }

    func receive(_ event: Event<Value>) throws {
        switch event {
        case .next(let element):
            guard case .object(let object) = element else {
                try context.elementFailed(
                    context.error("sqlite writes objects, one a row; got \(element.typeName)", element: element),
                    element: element)
                return
            }
            let database = try open(firstRow: object)
            let columns = self.columns ?? []
            if pending == 0 { try run { () throws(SQLiteError) in try database.execute("BEGIN IMMEDIATE") } }
            pending += 1  // the transaction is open whether the row is written or refused
            if let refused = write(columns.map { SQLiteDatabase.Parameter(object[$0] ?? .null) }, to: database) {
                if refused.isBusy { throw failure(refused) }
                try context.elementFailed(
                    context.error("\(table): \(refused.description)", element: element), element: element)
                return
            }
            if let origin = Origin.current { uncommitted.append(origin) }
            if pending >= batchCount {
                try commit()
            } else if pending == 1 {
                // The timer works for the whole transaction, not for the row current now.
                commitTimer.disposable = Origin.with(nil) {
                    context.scheduler.schedule(after: batchPeriod) { [weak self] in
                        guard let self else { return }
                        do { try self.commit() } catch { self.fail?(error) }
                    }
                }
            }
        case .completed, .error:
            try commit()
        }
    }

    /// Inserts one row; the error when the database refused it.
    private func write(_ values: [SQLiteDatabase.Parameter], to database: SQLiteDatabase) -> SQLiteError? {
        do {
            _ = try database.rows(insert, values)
            return nil
        } catch {
            return error
        }
    }

    /// Fails the run with an error met by the commit timer, between events.
    private var fail: ((any Error) -> Void)?

    func start(failing fail: @escaping (any Error) -> Void) {
        self.fail = fail
    }

    func whenFinished(_ done: @escaping () -> Void) {
        done()  // every row is committed when `completed` is received
    }

    func close() throws {
        commitTimer.dispose()
        // It holds the run, which holds this sink.
        fail = nil
        try commit()
        database = nil
    }

    private func commit() throws {
        commitTimer.disposable = nil
        guard pending > 0, let database else { return }
        pending = 0
        let origins = uncommitted
        uncommitted = []
        do {
            try run { () throws(SQLiteError) in try database.execute("COMMIT") }
        } catch {
            for origin in origins { origin.fail(error) }
            throw error
        }
        context.letGo(origins)
    }

    private func run(_ body: () throws(SQLiteError) -> Void) throws {
        do { try body() } catch { throw failure(error) }
    }

    private func failure(_ error: SQLiteError) -> PipelineRuntimeError {
        SQLiteAccess.failure(error, path: path, busyTimeout: busyTimeout, context: context)
    }

    /// The database, opened and the table made ready at the first row.
    private func open(firstRow: JSONObject) throws -> SQLiteDatabase {
        if let database { return database }
        let columns = self.columns ?? firstRow.keys.map { $0 }
        self.columns = columns
        let opened = try SQLiteAccess.open(path: path, create: true, busyTimeout: busyTimeout, context: context)
        let name = SQLiteDatabase.quote(table)
        let definitions = columns.map { column -> String in
            let type = Self.columnType(firstRow[column] ?? .null)
            return type.isEmpty ? SQLiteDatabase.quote(column) : "\(SQLiteDatabase.quote(column)) \(type)"
        }
        let keyList = key.map(SQLiteDatabase.quote).joined(separator: ", ")
        try run { () throws(SQLiteError) in
            try opened.execute(
                "CREATE TABLE IF NOT EXISTS \(name) (\(definitions.joined(separator: ", "))"
                    + (key.isEmpty ? "" : ", PRIMARY KEY (\(keyList))") + ")")
            if !key.isEmpty {
                try opened.execute(
                    "CREATE UNIQUE INDEX IF NOT EXISTS \(SQLiteDatabase.quote("\(table)_key")) ON \(name) (\(keyList))")
            }
        }
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        insert =
            "INSERT INTO \(name) (\(columns.map(SQLiteDatabase.quote).joined(separator: ", "))) VALUES (\(placeholders))"
        let others = columns.filter { !key.contains($0) }
        if !key.isEmpty {
            insert +=
                others.isEmpty
                ? " ON CONFLICT (\(keyList)) DO NOTHING"
                : " ON CONFLICT (\(keyList)) DO UPDATE SET "
                    + others.map { "\(SQLiteDatabase.quote($0)) = excluded.\(SQLiteDatabase.quote($0))" }.joined(
                        separator: ", ")
        }
        database = opened
        return opened
    }

    /// The declared type of a column whose first value is `value`.
    static func columnType(_ value: Value) -> String {
        switch value {
        case .int, .bool: "INTEGER"
        case .double: "REAL"
        case .string: "TEXT"
        case .array, .object: "TEXT"
        case .null: ""
        }
    }
}
