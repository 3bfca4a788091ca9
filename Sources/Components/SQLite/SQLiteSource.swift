@_spi(Components) import Pipeline
@_spi(Components) import Reactive
import SQLite

#if canImport(Glibc)
    import Glibc
#endif

private enum Key {
    static let path = Parameter<String>(
        "path", doc: "The database file, relative to the pipeline file.", example: "data/orders.db")
    static let query = Parameter<String>(
        "query", doc: "The SELECT whose rows are emitted, one object per row.",
        example: "SELECT id, customer, total FROM orders")
    static let every = Parameter<RxTimeInterval?>(
        "every", doc: "Run the query again every period (never completes); without it, once.", example: "5s"
    ).above(RxTimeInterval.zero)
    static let since = Parameter<String?>(
        "since",
        doc:
            "A column of the result that grows with new rows (an id, a time): each run emits only rows above the largest value emitted so far.",
        example: "id")
}

extension BuiltinComponents {
    /// `sqlite: {path, query}` (a source) — the rows of a query, once or polled.
    public static let sqliteSource = ComponentSpec(
        name: "sqlite",
        summary: "Emits the rows of an SQLite query as objects: once, or polled every period for new rows.",
        docs: """
            Each row is an object of its columns: INTEGER as integers, REAL as numbers, TEXT as \
            strings (whole, a NUL included), BLOB as base64 text, NULL as null. Without every, the query runs once at subscription and the source \
            completes. With every it runs again each period and never completes; with since, only rows \
            whose since column is above the largest value emitted so far are emitted (the query is \
            wrapped: SELECT * FROM (query) WHERE since > ? ORDER BY since), so each new row is emitted \
            once. Under --state the largest since value is checkpointed, and a resumed run goes on \
            after it. A database locked by another program is waited for up to busyTimeout, then the \
            run fails saying so; a query that SQLite refuses fails the run with SQLite's message. The \
            database is opened read-only (a statement that writes fails), and rows without the since \
            column are an error naming the columns they have. Rows are emitted one at a time as \
            SQLite makes them, so take ends even an endless recursive query, and a signal stops a \
            long query (a sort before its first row) at once.
            """,
        parameters: [Key.path, Key.query, Key.every, Key.since, SQLiteAccess.busyTimeout],
        example: "source: { sqlite: { path: data/orders.db, query: \"SELECT * FROM orders\", every: 5s, since: id } }",
        validate: { values, validation in validation.requireReadable(Key.path, in: values, what: "the database") },
        checkpointing: .keepsState("the largest value of its since column emitted so far"),
        delivery: Delivery(
            .atLeastOnce,
            "with --state and since, a resumed run reads again the rows after the last checkpoint's value; without it, every row again"
        ),
        factory: .source { parameters, context in
            let path = context.resolvePath(parameters[Key.path])
            let (every, since, busy) = (
                parameters[Key.every], parameters[Key.since], parameters[SQLiteAccess.busyTimeout]
            )
            let sql = SQLitePoll.query(parameters[Key.query], since: since)
            return PipelineSource { _ in
                Observable { observer, lifetime in
                    let database: SQLiteDatabase
                    do {
                        // Read-only: a source reads (`query: DELETE FROM orders` deleted every row).
                        database = try SQLiteAccess.open(
                            path: path, create: false, readOnly: true, busyTimeout: busy, context: context)
                    } catch {
                        observer.on(.error(error))
                        return
                    }
                    let reading = SQLitePoll(
                        database: database, sql: sql, since: since, path: path, busyTimeout: busy, context: context,
                        observer: observer, lifetime: lifetime)
                    guard let every else {
                        if reading.poll(), !lifetime.isDisposed { observer.on(.completed) }
                        return
                    }
                    guard reading.poll() else { return }
                    lifetime.add(
                        context.scheduler.schedulePeriodic(startAfter: every, period: every) {
                            if !lifetime.isDisposed, !reading.poll() { lifetime.dispose() }
                        })
                }
            }
        })
}

/// One subscription's reading of a `sqlite` source: the query run once, or once every period,
/// each row emitted as SQLite makes it, and the largest `since` value kept for checkpoints.
private final class SQLitePoll {
    private let database: SQLiteDatabase
    private let sql: String
    private let since: String?
    private let path: String
    private let busyTimeout: RxTimeInterval
    private let context: ComponentContext
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private let last: StateBox<Value>

    init(
        database: SQLiteDatabase, sql: String, since: String?, path: String, busyTimeout: RxTimeInterval,
        context: ComponentContext, observer: AnyObserver<Value>, lifetime: Lifetime
    ) {
        (self.database, self.sql, self.since, self.path) = (database, sql, since, path)
        (self.busyTimeout, self.context, self.observer, self.lifetime) = (busyTimeout, context, observer, lifetime)
        let last = StateBox<Value>(context.restoredState ?? .null)
        context.keepState { last.value }
        self.last = last
        // A signal stops a long query inside SQLite too (a sort before the first row).
        let scheduler = context.scheduler
        database.interrupt { scheduler.isInterrupted }
    }

    /// The query as run: without trailing semicolons, and with `since` only the rows past the
    /// last value (`?1`), in its order.
    static func query(_ written: String, since: String?) -> String {
        var query = written.trimmingCharacters(in: .whitespacesAndNewlines)
        while query.hasSuffix(";") { query.removeLast() }
        guard let since else { return query }
        let column = SQLiteDatabase.quote(since)
        return "SELECT * FROM (\(query)) WHERE ?1 IS NULL OR \(column) > ?1 ORDER BY \(column)"
    }

    /// Runs the query once, emitting each row as SQLite makes it (an endless recursive query is
    /// read as far as take wants); false when it failed (and the error was sent) or the run stopped.
    func poll() -> Bool {
        var problem: (any Error)?
        var stopped = false
        let scheduler = context.scheduler
        let parameters = since == nil ? [] : [SQLiteDatabase.Parameter(last.value)]
        let outcome = Result { () throws(SQLiteError) in
            try database.eachRow(sql, parameters) { row in
                if lifetime.isDisposed || scheduler.isInterrupted {
                    stopped = true
                    return false
                }
                problem = emit(row)
                return problem == nil
            }
        }
        if case .failure(let error) = outcome {
            // Interrupted by a signal: the run is stopping, not failing.
            if scheduler.isInterrupted { return false }
            problem = SQLiteAccess.failure(error, path: path, busyTimeout: busyTimeout, context: context)
        }
        if let problem {
            observer.on(.error(problem))
            return false
        }
        return !stopped
    }

    /// Emits `row` as an object; a since column the result lacks would be read as a constant
    /// (every row, every poll), so it is an error.
    private func emit(_ row: SQLiteDatabase.Row) -> (any Error)? {
        if let since, !row.columns.contains(since) {
            return context.error(
                "the query's rows have no column '\(since)' (since); they have "
                    + row.columns.map { "'\($0)'" }.joined(separator: ", "))
        }
        var object = JSONObject()
        for (column, value) in Swift.zip(row.columns, row.values) { object[column] = value.element }
        if let since { last.value = object[since] ?? last.value }
        observer.on(.next(.object(object)))
        return nil
    }
}
