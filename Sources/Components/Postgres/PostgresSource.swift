@_spi(Components) import Pipeline
import Postgres
@_spi(Components) import Reactive

private enum Key {
    static let query = Parameter<String?>(
        "query", doc: "A SELECT whose rows are emitted, one object per row (instead of changes).",
        example: "SELECT id, customer, total FROM orders")
    static let every = Parameter<RxTimeInterval?>(
        "every", doc: "Run the query again every period (never completes); without it, once.", example: "5s"
    ).above(RxTimeInterval.zero)
    static let since = Parameter<String?>(
        "since",
        doc:
            "A column of the query's result that grows with new rows (an id, a time): each run emits only rows above the largest value emitted so far, in its order.",
        example: "id")
    static let slot = Parameter<String?>(
        "slot", doc: "The logical replication slot whose changes are read (change data capture).",
        example: "rivulet_orders")
    static let publication = Parameter<String?>(
        "publication", doc: "The publication naming the tables whose changes are read.", example: "rivulet_orders")
    static let create = Parameter<Bool>(
        "create", default: false,
        doc: "Make the publication (for tables, or all tables) and the slot when they are missing.")
    static let retryFor = Parameter<RxTimeInterval>(
        "retryFor", default: .seconds(30),
        doc:
            "How long a lost connection (a server restart, a network fault) is tried again, every second, before the run fails.",
        example: "5m")
    static let snapshot = Parameter<Bool>(
        "snapshot", default: false,
        doc:
            "With create: a slot this run makes starts with the rows its tables hold then (op read), consistent with it: every change after them follows."
    )
    static let tables = Parameter<[String]?>(
        "tables", doc: "The tables the publication must publish (schema.table for another schema).",
        example: "[orders, customers]")
}

extension BuiltinComponents {
    /// `postgres: {slot, publication}` or `postgres: {query}` (a source) — a database's changes
    /// as they commit, or the rows of a query.
    public static let postgresSource = ComponentSpec(
        name: "postgres",
        summary:
            "Emits a PostgreSQL database's changes as they commit (logical replication), or the rows of a query.",
        docs: """
            With slot and publication it reads the changes of the publication's tables through \
            logical replication (the built-in pgoutput plugin; the server needs wal_level=logical \
            and a role with REPLICATION): each insert, update and delete as {op, schema, table, \
            before, after, lsn, commitTime}, whole transactions in commit order; a truncation as \
            one element per table with op truncate. after is the new row; before is the old row's \
            key (the whole old row under REPLICA IDENTITY FULL), null for an insert. Values are \
            typed: integers, floats and booleans as they are, numeric as exact text (numeric: \
            number reads numbers), timestamps as milliseconds since the Unix epoch (what eventTime \
            reads; commitTime too), json and jsonb parsed, bytea as base64, NULL as null, other \
            types in PostgreSQL's text form; a large value an update did not touch is not sent and \
            is missing from after. The slot's position is confirmed to the server only once \
            everything each change caused is written by every sink, so a runner that dies loses \
            nothing: the next run reads again what was not confirmed, and a sink with key or id \
            writes it once. create: true makes a missing publication (for tables, else all tables) \
            and slot; without it a missing one is an error naming it. With snapshot: true too, \
            a slot this run makes starts with the rows its tables hold then, each {op: read, \
            after: row, lsn: the slot's start, commitTime: the snapshot's time}, read through a \
            temporary slot's exported snapshot, and every change after them follows; the slot is \
            made for good (a copy of the temporary one) once those rows are all written, so a run \
            that dies first leaves no slot and the next run takes the snapshot again whole (a row \
            deleted in between stays wherever the first one wrote it). A slot keeps the server's \
            log from its confirmed position on: a slot nobody reads any more fills the server's \
            disk, so drop it (SELECT pg_drop_replication_slot('NAME')) when a pipeline is retired. \
            A lost connection (the server restarting) is tried again every second for retryFor; \
            reading goes on after the last transaction read, so nothing is emitted twice. Under \
            --state each checkpoint lists the changes whose effect it holds (by transaction, until \
            the slot is confirmed past them); the slot moves past a change once a committed \
            checkpoint holds it, and a resumed run passes over a change read again that its \
            checkpoint holds, so an aggregate counts each change once across crashes. \
            With query instead, the rows of a SELECT as objects of their columns, typed as above, \
            read one at a time (never the whole result in memory): once, or every period with \
            every; with since only rows whose since column is above the largest value emitted so \
            far (the query is wrapped: SELECT * FROM (query) WHERE since > $1 ORDER BY since), \
            kept under --state.
            """,
        parameters: [
            PostgresAccess.url, Key.slot, Key.publication, Key.create, Key.snapshot, Key.tables, Key.query, Key.every,
            Key.since,
            PostgresAccess.numerics, Key.retryFor,
        ],
        example:
            "source: { postgres: { url: \"postgresql://rivulet@127.0.0.1/shop\", slot: rivulet_orders, publication: rivulet_orders, create: true, tables: [orders] } }",
        validate: { values, validation in
            let reading = values.has(Key.slot) || values.has(Key.publication)
            if reading, values.has(Key.query) {
                validation.error(
                    "give either slot and publication (changes) or query (rows), not both", at: Key.query, in: values)
            } else if reading, !(values.has(Key.slot) && values.has(Key.publication)) {
                validation.error(
                    "reading changes needs both slot and publication",
                    at: values.has(Key.slot) ? Key.slot : Key.publication, in: values)
            } else if !reading, !values.has(Key.query) {
                validation.error(
                    "give slot and publication to read changes, or query to read rows", at: Key.query, in: values)
            }
            if !reading {
                for key in [Key.create.spec.name, Key.snapshot.spec.name, Key.tables.spec.name]
                where values.values[key] != nil {
                    validation.error("\(key) belongs to reading changes (slot, publication)", at: Key.query, in: values)
                }
            } else if values.has(Key.every) || values.has(Key.since) {
                validation.error("every and since belong to query", at: Key.slot, in: values)
            } else if values[Key.snapshot], !values[Key.create] {
                validation.error(
                    "snapshot needs create: true: the snapshot is taken as the slot is made", at: Key.snapshot,
                    in: values)
            }
        },
        checkpointing: .depending(
            "changes: which changes each checkpoint holds (listed by transaction until the slot is confirmed past them); query with since: the largest since value emitted"
        ) { values in
            values.has(Key.slot)
                ? .keepsState(
                    "which changes each checkpoint holds: the slot is confirmed past a change once a committed checkpoint holds its effect, and one read again that a checkpoint holds is passed over"
                )
                : .keepsState("the largest value of its since column emitted so far")
        },
        delivery: Delivery(
            .atLeastOnce,
            "changes: the slot is confirmed once every sink wrote a change, so a runner that dies reads again what was not confirmed (a sink with key or id writes it once); with --state once a committed checkpoint holds a change's effect, and a change read again that the resumed checkpoint holds is passed over (exactly-once into operators' state and a file sink); query: every row again, or with --state and since the rows after the last checkpoint's value"
        ),
        factory: .source { parameters, context in
            let settings = parameters[PostgresAccess.url]
            let numerics = parameters[PostgresAccess.numerics]
            if let slot = parameters[Key.slot], let publication = parameters[Key.publication] {
                let replication = PostgresReplication.Settings(
                    connection: settings, slot: slot, publication: publication, create: parameters[Key.create],
                    snapshot: parameters[Key.snapshot],
                    tables: parameters[Key.tables] ?? [], numerics: numerics, retryFor: parameters[Key.retryFor])
                return PipelineSource { _ in changes(replication, context: context) }
            }
            let query = PostgresQuery(
                settings: settings, query: parameters[Key.query] ?? "", since: parameters[Key.since],
                numerics: numerics)
            let every = parameters[Key.every]
            return PipelineSource { _ in query.rows(every: every, context: context) }
        }
    ).declaring { traits in
        // Its changes are origins, counted on the pipeline's thread only (rows of a query are not).
        traits.setsOrigins = { values in values.has(Key.slot) && values.has(Key.publication) }
    }

    /// The changes of a replication slot, read on a thread of their own.
    private static func changes(_ settings: PostgresReplication.Settings, context: ComponentContext)
        -> Observable<Value>
    {
        Observable { observer, lifetime in
            guard let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler else {
                observer.on(
                    .error(
                        context.error(
                            "postgres reads changes on the real clock only; under rivulet test give this stream an input"
                        )))
                return
            }
            let replication = PostgresReplication(settings: settings)
            if context.checkpoints != nil {
                do {
                    try replication.keepPositions(context: context)
                } catch {
                    observer.on(.error(error))
                    return
                }
            }
            lifetime.onDispose { replication.stop() }
            replication.start(
                scheduler: scheduler, context: context,
                emit: { changes in
                    for (element, origin) in changes {
                        guard !lifetime.isDisposed else { return }
                        Origin.with(origin) { observer.on(.next(element)) }
                    }
                },
                failed: { error in
                    guard !lifetime.isDisposed else { return }
                    observer.on(.error(error))
                })
        }
    }
}

/// The `postgres` source's query mode: rows one at a time as the server sends them.
struct PostgresQuery: Sendable {
    let settings: String?
    let query: String
    let since: String?
    let numerics: PostgresValues.Numerics

    init(settings: String?, query: String, since: String?, numerics: PostgresValues.Numerics) {
        self.settings = settings
        var trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines)
        while trimmed.hasSuffix(";") { trimmed.removeLast() }
        self.query = trimmed
        self.since = since
        self.numerics = numerics
    }

    /// The statement for a poll after `last` (nil: the first, all rows).
    func statement(after last: Value) -> (sql: String, parameters: [String?]) {
        guard let since else { return (query, []) }
        let column = PostgresConnection.quote(since)
        let ordered = "SELECT * FROM (\(query)) AS rows"
        guard let value = PostgresValues.parameter(last) else { return ("\(ordered) ORDER BY \(column)", []) }
        return ("\(ordered) WHERE \(column) > $1 ORDER BY \(column)", [value])
    }

    func rows(every: RxTimeInterval?, context: ComponentContext) -> Observable<Value> {
        Observable { observer, lifetime in
            let connection: PostgresConnection
            do {
                connection = try PostgresAccess.connect(settings, context: context)
            } catch {
                observer.on(.error(error))
                return
            }
            let last = StateBox<Value>(context.restoredState ?? .null)
            context.keepState { last.value }
            let scheduler = context.scheduler
            /// Runs the query once, emitting each row as it comes; false when it failed (and the
            /// error was sent) or the run stopped.
            func poll() -> Bool {
                var problem: (any Error)?
                var stopped = false
                let (sql, parameters) = statement(after: last.value)
                do {
                    try connection.eachRow(sql, parameters) { row in
                        if lifetime.isDisposed || scheduler.isInterrupted {
                            stopped = true
                            return false
                        }
                        if let since, !row.columns.contains(since) {
                            problem = context.error(
                                "the query's rows have no column '\(since)' (since); they have "
                                    + row.columns.map { "'\($0)'" }.joined(separator: ", "))
                            return false
                        }
                        let object = PostgresValues.object(of: row, numerics: numerics)
                        // Kept in the server's text form: compared by the server in the column's type
                        // (a timestamp read as milliseconds would not compare with the column).
                        if let since, let index = row.columns.firstIndex(of: since), let text = row.values[index] {
                            last.value = .string(text)
                        }
                        observer.on(.next(object))
                        return true
                    }
                } catch {
                    problem = PostgresAccess.failure(error, context: context)
                }
                if let problem {
                    observer.on(.error(problem))
                    return false
                }
                return !stopped
            }
            lifetime.onDispose { withExtendedLifetime(connection) {} }
            guard let every else {
                if poll(), !lifetime.isDisposed { observer.on(.completed) }
                return
            }
            guard poll() else { return }
            lifetime.add(
                scheduler.schedulePeriodic(startAfter: every, period: every) {
                    if !lifetime.isDisposed, !poll() { lifetime.dispose() }
                })
        }
    }
}
