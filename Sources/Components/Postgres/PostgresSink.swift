import Dispatch
@_spi(Components) import Pipeline
import Postgres
@_spi(Components) import Reactive

private enum Key {
    static let table = Parameter<String>(
        "table", doc: "The table rows go to (schema.table for another schema); created if missing.",
        example: "customer_totals")
    static let columns = Parameter<ParameterMap<Expression>?>(
        "columns",
        doc:
            "Each column and the expression that gives its value, in order (default: the fields of the first element, each as it is).",
        example: "{ customer: .key, total: .sum, minute: .window.start }")
    static let key = Parameter<[String]?>(
        "key", doc: "Columns that identify a row: a row with the same key is replaced in place (an upsert).",
        example: "[customer, minute]")
    static let delete = Parameter<Expression?>(
        "delete", doc: "When true for an element, the row with its key is deleted instead (needs key).",
        example: ".op == \"delete\"")
    static let id = Parameter<String?>(
        "id",
        doc:
            "A column that gets each row's id derived from the message behind it (a change's SLOT:LSN, a NATS message's CONSUMER:SEQUENCE), unique: a message delivered again after a crash inserts nothing twice.",
        example: "change_id")
    static let batchCount = Parameter<Int>(
        "count", default: 1000, doc: "Rows per transaction at most.", example: "5000"
    ).atLeast(1)
    static let batchPeriod = Parameter<RxTimeInterval>(
        "period", default: .seconds(1), doc: "The longest a row waits for its transaction to commit."
    ).above(RxTimeInterval.zero)
    static let batch = Parameter<ParameterValues?>.object(
        "batch", [batchCount, batchPeriod], doc: "How rows are grouped into transactions.",
        example: "{ count: 5000, period: 2s }")
    static let retryFor = Parameter<RxTimeInterval>(
        "retryFor", default: .seconds(30),
        doc: "How long a lost connection is tried again (every second) before the run fails.", example: "2m")
}

extension BuiltinComponents {
    /// `postgres: {table}` (a sink) — rows written in transactions, upserted or deleted by key.
    public static let postgresSink = ComponentSpec(
        name: "postgres",
        summary: "Writes elements as rows of a PostgreSQL table, batched in transactions; upserts or deletes by key.",
        docs: """
            Each element becomes a row: its columns from the columns expressions (default: the first \
            element's fields, each as it is). Values are sent as parameters, never spliced into SQL: \
            numbers, text and booleans as they are, objects and lists as JSON (for json, jsonb), null \
            as NULL; the server converts each to its column's type, and a value it cannot convert is \
            an error naming the column. A missing table is created, each column typed by its first \
            value (bigint, double precision, boolean, text, jsonb; text for null). With key, a row \
            whose key exists replaces that row's other columns (INSERT ... ON CONFLICT DO UPDATE), \
            and delete removes the row of an element's key. With id, each row also gets the id \
            derived from the message behind it (a postgres change's SLOT:LSN, a nats message's \
            CONSUMER:SEQUENCE, then :2, :3 for its second and later rows), in a unique column, so \
            a message delivered again after a crash inserts nothing twice, even without a key. \
            A transaction's rows go by COPY, the server's bulk path: straight into the table, or \
            with key or id into a temporary table of the session first, then into the table by one \
            INSERT ... SELECT ... ON CONFLICT; deletes by one DELETE a run of them. \
            Rows are written in transactions of batch.count rows, committed at the latest \
            batch.period after their first row, before each checkpoint and at the end; the \
            messages behind them are acknowledged once their transaction committed. A lost \
            connection is tried again every second for retryFor, the open transaction's rows \
            written again on the new one; a row the table refuses (a constraint, a value of the \
            wrong type) fails the run, or with onError is skipped or reported on ID.errors while \
            the other rows of its transaction are written.
            """,
        parameters: [
            PostgresAccess.url, Key.table, Key.columns, Key.key, Key.delete, Key.id, Key.batch, Key.retryFor,
        ],
        example:
            "sink: { postgres: { url: \"postgresql://rivulet@127.0.0.1/shop\", table: customer_totals, key: [customer] } }",
        validate: { values, validation in
            if values.has(Key.delete), values[Key.key] == nil {
                validation.error(
                    "delete needs key: the rows it deletes are found by their key", at: Key.delete, in: values)
            }
            let columns = values[Key.columns]?.pairs.map(\.key)
            if let key = values[Key.key], let columns {
                for name in key where !columns.contains(name) {
                    validation.error(
                        "key column '\(name)' is not among the columns", at: Key.key, in: values,
                        note: "columns: \(columns.joined(separator: ", "))")
                }
            }
            if let id = values[Key.id], let columns, columns.contains(id) {
                validation.error(
                    "the id column '\(id)' is also among the columns: the sink fills it", at: Key.id, in: values)
            }
        },
        checkpointing: .stateless,
        delivery: Delivery(
            .atLeastOnce,
            "rows are committed in transactions before the messages behind them are acknowledged; with key or id a message delivered again replaces or skips its rows (exactly-once)"
        ),
        elementErrors: true,
        factory: .sink { parameters, context in
            let batch = parameters[Key.batch]
            return PostgresSink(
                settings: parameters[PostgresAccess.url], table: parameters[Key.table],
                columns: parameters[Key.columns], key: parameters[Key.key] ?? [], delete: parameters[Key.delete],
                idColumn: parameters[Key.id], batchCount: batch?[Key.batchCount] ?? 1000,
                batchPeriod: batch?[Key.batchPeriod] ?? .seconds(1), retryFor: parameters[Key.retryFor],
                context: context)
        })
}

/// The `postgres` sink: rows are collected on the pipeline's thread and written at commit time as
/// few statements (`PostgresWrites`) in one transaction; the messages behind them are kept until
/// it committed (`OriginKeepingSink`).
final class PostgresSink: AsynchronousSink, OriginKeepingSink {
    private let settings: String?
    private let tableName: String
    private let columnExpressions: ParameterMap<Expression>?
    private let key: [String]
    private let delete: Expression?
    private let idColumn: String?
    private let batchCount: Int
    private let batchPeriod: RxTimeInterval
    private let retryFor: RxTimeInterval
    private let context: ComponentContext
    private let scope: EvaluationScope

    private var connection: PostgresConnection?
    private var writes: PostgresWrites?
    /// Without columns, the fields written (the first element's), fixed with `writes`.
    private var fieldNames: [String]?
    /// The rows of the open transaction, each with the element and origin behind it.
    private var rows: [Entry] = []
    private let commitTimer = SerialDisposable()
    /// Since when a lost connection has been tried again, while it is.
    private var retryingSince: RxTime?
    private var finished: (() -> Void)?
    private var fail: ((any Error) -> Void)?

    init(
        settings: String?, table: String, columns: ParameterMap<Expression>?, key: [String], delete: Expression?,
        idColumn: String?, batchCount: Int, batchPeriod: RxTimeInterval, retryFor: RxTimeInterval,
        context: ComponentContext
    ) {
        self.settings = settings
        self.tableName = table
        self.columnExpressions = columns
        self.key = key
        self.delete = delete
        self.idColumn = idColumn
        self.batchCount = batchCount
        self.batchPeriod = batchPeriod
        self.retryFor = retryFor
        self.context = context
        scope = context.makeScope()
        // A checkpoint moves the sources on past these rows: they must be in the table first.
        context.keepState { [weak self] in
            try self?.commit(retrying: false, waiting: true)
            return .null
        }
    }

    func start(failing fail: @escaping (any Error) -> Void) {
        self.fail = fail
    }

    func receive(_ event: Event<Value>) throws {
        switch event {
        case .next(let element):
            guard let row = try row(of: element) else { return }
            rows.append((row, element, Origin.current))
            if rows.count >= batchCount, retryingSince == nil {
                try commit(retrying: true)
            } else if rows.count == 1 {
                scheduleCommit(after: batchPeriod)
            }
        case .completed, .error:
            try commit(retrying: true)
        }
    }

    func whenFinished(_ done: @escaping () -> Void) {
        if rows.isEmpty, writing == nil { done() } else { finished = done }
    }

    func close() throws {
        commitTimer.dispose()
        fail = nil
        finished = nil
        defer { connection = nil }
        // The transaction being written is waited for: its messages are let go only once it is.
        try settle(retrying: false)
        guard retryingSince == nil else {
            // Never written: their messages go back rather than being acknowledged.
            failUnwritten(context.error("the run stopped while PostgreSQL could not be reached"))
            return
        }
        try commit(retrying: false, waiting: true)
    }

    /// Fails the messages behind the rows not written, so they are delivered again.
    private func failUnwritten(_ error: any Error) {
        for origin in rows.compactMap(\.origin) { origin.fail(error) }
        rows = []
    }

    // MARK: Rows

    /// The row `element` writes; nil when it failed and `onError` dropped it.
    private func row(of element: Value) throws -> PostgresWrites.Row? {
        try context.handling(element) {
            var values: [Value]
            if let columnExpressions {
                values = try columnExpressions.pairs.map { try context.evaluate($0.value, element, in: scope) }
            } else {
                guard case .object(let object) = element else {
                    throw context.error(
                        "postgres writes objects, one a row (or give columns); got \(element.typeName)",
                        element: element)
                }
                values = (fieldNames ?? object.keys.map { $0 }).map { object[$0] ?? .null }
            }
            let deletes = try delete.map { try context.evaluate($0, element, in: scope) == .bool(true) } ?? false
            if writes == nil { try prepare(firstValues: values, element: element) }
            var texts = values.map(PostgresValues.parameter)
            if idColumn != nil {
                texts.append((Origin.current as? ResultIdentifying)?.nextResultID())
            }
            return PostgresWrites.Row(values: texts, deletes: deletes)
        }
    }

    /// Fixes the columns at the first element and creates the table if it is missing.
    private func prepare(firstValues: [Value], element: Value) throws {
        var names =
            columnExpressions?.pairs.map(\.key)
            ?? {
                guard case .object(let object) = element else { return [] }
                return object.keys.map { $0 }
            }()
        if columnExpressions == nil { fieldNames = names }
        var types = firstValues.map(Self.columnType)
        if let idColumn {
            names.append(idColumn)
            types.append("text")
        }
        let prepared = PostgresWrites(table: tableName, columns: names, key: key, idColumn: idColumn)
        let connection = try open()
        do {
            try connection.execute(prepared.createTable(types: types))
        } catch {
            throw PostgresAccess.failure(error, context: context)
        }
        writes = prepared
    }

    /// The column type of a table made for a first value `value`.
    static func columnType(_ value: Value) -> String {
        switch value {
        case .int: "bigint"
        case .double: "double precision"
        case .bool: "boolean"
        case .string, .null: "text"
        case .array, .object: "jsonb"
        }
    }

    // MARK: Transactions

    private func open() throws -> PostgresConnection {
        if let connection, connection.isOpen { return connection }
        connection = nil
        let opened = try PostgresAccess.connect(settings, context: context)
        connection = opened
        return opened
    }

    private func scheduleCommit(after delay: RxTimeInterval) {
        // The timer works for the whole transaction, not for the row current now.
        commitTimer.disposable = Origin.with(nil) {
            context.scheduler.schedule(after: delay) { [weak self] in
                guard let self else { return }
                do { try self.commit(retrying: true) } catch { self.fail?(error) }
            }
        }
    }

    /// One row of a transaction, with the element and origin behind it.
    private typealias Entry = (row: PostgresWrites.Row, element: Value, origin: Origin?)

    /// A transaction handed to the writing thread: its rows, and once written how it went.
    private final class Transaction: @unchecked Sendable {
        let entries: [Entry]
        let rows: [PostgresWrites.Row]
        /// The sink's connection, used by the writing thread alone until `written`.
        let connection: PostgresConnection
        /// Signalled once `outcome` is set.
        let written = DispatchSemaphore(value: 0)
        var outcome: Outcome?

        init(entries: [Entry], connection: PostgresConnection) {
            self.entries = entries
            self.connection = connection
            rows = entries.map(\.row)
        }
    }

    /// How a transaction went: committed; rolled back because the table refused rows (by their
    /// index: `onError` decides whether the run fails or the others are written again); or not
    /// written at all.
    private enum Outcome {
        case committed
        case refused([(index: Int, error: PostgresError)])
        case failed(PostgresError)
    }

    /// The transaction being written on the writing thread, at most one: the pipeline goes on
    /// with the next rows meanwhile, and waits for it before handing over another.
    private var writing: Transaction?
    private let writer = DispatchQueue(label: "rivulet postgres sink")

    /// Hands the open transaction's rows to the writing thread (waiting for the one before),
    /// then, when `waiting`, for them to be written. A lost connection is tried again a second
    /// later (when `retrying`) until `retryFor` has passed.
    private func commit(retrying: Bool, waiting: Bool = false) throws {
        commitTimer.disposable = nil
        try settle(retrying: retrying)
        guard !rows.isEmpty, let writes else {
            finish()
            return
        }
        let connection: PostgresConnection
        do {
            connection = try open()
        } catch let error as PipelineRuntimeError where retryingSince != nil {
            try lost(error, retrying: retrying)
            return
        } catch {
            failUnwritten(error)
            throw error
        }
        let transaction = Transaction(entries: rows, connection: connection)
        rows = []
        writing = transaction
        let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler
        let sink = SchedulerBound(self)
        let table = tableName
        writer.async {
            transaction.outcome = Self.write(transaction.rows, writes, on: transaction.connection, table: table)
            transaction.written.signal()
            // Settled at once, not at the next commit: its messages are let go as soon as written.
            scheduler?.enqueue {
                do {
                    // Rows back after a refusal are written again at once.
                    if try sink.value.settle(retrying: true) { try sink.value.commit(retrying: true) }
                } catch {
                    sink.value.fail?(error)
                }
            }
        }
        if waiting || scheduler == nil, try settle(retrying: retrying) {
            try commit(retrying: retrying, waiting: waiting)
        }
    }

    /// Waits for the transaction being written, if any, and lets go of its messages; or hands
    /// the rows the table refused to `onError` and takes the others back to be written again
    /// (then true); or takes its rows back when the connection was lost.
    @discardableResult
    private func settle(retrying: Bool) throws -> Bool {
        guard let transaction = writing else { return false }
        transaction.written.wait()
        writing = nil
        switch transaction.outcome! {
        case .committed:
            retryingSince = nil
            context.letGo(transaction.entries.compactMap(\.origin))
            finish()
        case .refused(let refused):
            var kept = transaction.entries
            do {
                for (index, error) in refused.reversed() {
                    let entry = kept.remove(at: index)
                    try Origin.with(entry.origin) {
                        try context.elementFailed(
                            context.error("\(tableName): \(error.description)", element: entry.element),
                            element: entry.element)
                    }
                }
            } catch {
                // The run fails: nothing of the transaction was written, its messages go back.
                rows = transaction.entries + rows
                failUnwritten(error)
                throw error
            }
            rows = kept + rows
            return true
        case .failed(let error) where error.isTransient:
            connection = nil
            rows = transaction.entries + rows
            try lost(PostgresAccess.failure(error, context: context), retrying: retrying)
        case .failed(let error):
            rows = transaction.entries + rows
            let failure = PostgresAccess.failure(error, context: context)
            failUnwritten(failure)
            throw failure
        }
        return false
    }

    /// The connection broke, or could not be made again: tried again a second later while
    /// `retrying` and `retryFor` has not passed; else the rows' messages fail.
    private func lost(_ error: PipelineRuntimeError, retrying: Bool) throws {
        connection = nil
        guard retrying else {
            failUnwritten(error)
            throw error
        }
        let now = context.scheduler.now
        let since = retryingSince ?? now
        retryingSince = since
        guard now - since < retryFor else {
            let failure = context.error(
                "\(error.message); tried again for \(DurationSyntax.format(retryFor)) (retryFor)")
            failUnwritten(failure)
            throw failure
        }
        scheduleCommit(after: .seconds(1))
    }

    private func finish() {
        guard rows.isEmpty, writing == nil, let finished else { return }
        self.finished = nil
        finished()
    }

    /// The rows in one transaction; when a row is refused, the rows one at a time to find each
    /// one refused, then rolled back. On the writing thread: it touches nothing of the pipeline's.
    private static func write(
        _ rows: [PostgresWrites.Row], _ writes: PostgresWrites, on connection: PostgresConnection, table: String
    ) -> Outcome {
        do {
            try connection.execute("BEGIN")
            for statement in writes.statements(for: rows) {
                if let copying = statement.copying {
                    try connection.copyIn(statement.sql, rows: copying)
                } else {
                    try connection.query(statement.sql, statement.parameters)
                }
            }
            try connection.execute("COMMIT")
            return .committed
        } catch {
            if error.isTransient { return .failed(error) }
            _ = try? connection.execute("ROLLBACK")
        }
        do throws(PostgresError) {
            try connection.execute("BEGIN")
            var refused: [(index: Int, error: PostgresError)] = []
            for (index, row) in rows.enumerated() {
                let statement = writes.statement(for: row)
                try connection.execute("SAVEPOINT row")
                do {
                    try connection.query(statement.sql, statement.parameters)
                } catch {
                    if error.isTransient { throw error }
                    try connection.execute("ROLLBACK TO SAVEPOINT row")
                    refused.append((index, error))
                }
            }
            if refused.isEmpty {
                try connection.execute("COMMIT")
                return .committed
            }
            try connection.execute("ROLLBACK")
            return .refused(refused)
        } catch {
            if !error.isTransient { _ = try? connection.execute("ROLLBACK") }
            return .failed(error)
        }
    }
}
