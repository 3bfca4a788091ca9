import Foundation
@_spi(Components) import Pipeline
import Postgres
@_spi(Components) import Reactive

/// The thread that reads a replication slot for the `postgres` source: it makes the publication
/// and the slot when asked, streams `pgoutput`'s changes into the pipeline (on its thread, at
/// most `window` changes ahead of it), and tells the server how far the slot may be confirmed,
/// every second and whenever the server asks.
final class PostgresReplication: @unchecked Sendable {
    struct Settings: Sendable {
        var connection: String?
        var slot: String
        var publication: String
        var create: Bool
        /// With `create`: a slot made by this run starts with its tables' rows.
        var snapshot: Bool = false
        var tables: [String]
        var numerics: PostgresValues.Numerics
        /// How long a lost connection is tried again before the source fails.
        var retryFor: RxTimeInterval = .seconds(30)
        /// How many changes may wait for the pipeline before reading pauses.
        var window = 10_000
    }

    private let settings: Settings
    private let confirmations = PostgresConfirmations()
    /// Under `--state`, the changes the run's checkpoints hold.
    private var coverage: PostgresCoverage?
    private let condition = NSCondition()
    /// Changes handed to the pipeline's thread and not yet emitted there.
    private var waiting = 0
    private var stopped = false
    /// Where the last transaction read ended: after a reconnection the server sends again what
    /// was not confirmed, and what was read already is skipped.
    private var readUpTo = LogSequenceNumber.zero
    /// The transaction being read (its commit position, its record, the changes emitted), kept
    /// across a reconnection that cut it: its first changes are not emitted twice.
    private var current: (commit: LogSequenceNumber, transaction: PostgresConfirmations.Transaction, emitted: Int)?
    /// While the initial snapshot's rows are not all written: the temporary slot read meanwhile,
    /// the rows as one transaction, and the connection that read them (it makes the slot).
    private var snapshotSlot: (name: String, rows: PostgresConfirmations.Transaction, reader: PostgresConnection)?

    init(settings: Settings) {
        self.settings = settings
    }

    /// Keeps the slot's position in the run's checkpoints: what each one holds is listed in it,
    /// passed over when it is read again, and confirmed to the server once it is committed.
    ///
    /// - Throws: a message naming what is wrong with the restored position.
    func keepPositions(context: ComponentContext) throws {
        let restored = context.restoredState
        if let restored, let problem = PostgresCoverage.problem(with: restored) {
            throw context.error(
                "the checkpoint's position of slot '\(settings.slot)' \(problem); reset the pipeline's "
                    + "checkpoint to start over (rivulet state FILE --reset NAME)")
        }
        let coverage = PostgresCoverage(restoring: restored, confirmations: confirmations)
        self.coverage = coverage
        context.keepPosition(read: { coverage.position() }, committed: { coverage.committed() })
    }

    /// Where changes and a failure go, on the pipeline's thread; nil once the source is disposed.
    /// Only the pipeline's thread reads or writes it: the reading thread must never hold the
    /// observer, or it could be the one to release it while the pipeline is torn down.
    private var target: Target?

    /// Where the slot's lag is shown (`postgres_slot_lag_bytes`), when the run is watched.
    private var meter: ComponentMeter?
    /// The end of the server's log, as its last message said.
    private var serverEnd = LogSequenceNumber.zero

    /// Stops reading and lets go of the observer (on the pipeline's thread); the thread sends the
    /// last confirmation and ends.
    func stop() {
        target = nil
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    private var isStopped: Bool { condition.withLock { stopped } }

    /// Starts the thread; `emit` runs on the pipeline's thread with a batch of changes, `failed`
    /// when reading ended with an error (`report` prints a line for the user).
    func start(
        scheduler: any ConcurrentDeliveryScheduler, context: ComponentContext,
        emit: @escaping (_ changes: [(Value, PostgresChange)]) -> Void,
        failed: @escaping (_ error: PipelineRuntimeError) -> Void
    ) {
        target = Target(emit: emit, failed: failed, context: context)
        meter = context.meter
        let thread = Thread { [self] in
            var lostSince: RxTime?
            while true {
                do {
                    if try read(scheduler: scheduler, connected: { lostSince = nil }) { continue }
                    return
                } catch let error as PostgresError where error.isTransient && !isStopped {
                    // The server restarted or the network broke: read again from the slot.
                    let since = lostSince ?? scheduler.now
                    lostSince = since
                    if scheduler.now - since < settings.retryFor {
                        pause(seconds: 1)
                        continue
                    }
                    fail(
                        "the connection to PostgreSQL was lost: \(error.description); tried again for "
                            + "\(DurationSyntax.format(settings.retryFor)) (retryFor)", scheduler: scheduler)
                } catch {
                    fail((error as? PostgresError)?.description ?? "\(error)", scheduler: scheduler)
                }
                return
            }
        }
        thread.name = "rivulet postgres \(settings.slot)"
        thread.start()
    }

    private struct Target {
        let emit: ([(Value, PostgresChange)]) -> Void
        let failed: (PipelineRuntimeError) -> Void
        let context: ComponentContext
    }

    private func fail(_ message: String, scheduler: any ConcurrentDeliveryScheduler) {
        scheduler.enqueue { [self] in
            guard let target else { return }
            target.failed(target.context.error(message))
        }
    }

    /// Waits `seconds`, or less if the source is stopped meanwhile.
    private func pause(seconds: Double) {
        let limit = Date(timeIntervalSinceNow: seconds)
        condition.withLock {
            while !stopped, condition.wait(until: limit) {}
        }
    }

    /// Reads the slot until the source is stopped (false), or until the initial snapshot's rows
    /// are all written and the slot made for good (true: read it from there); `connected` once
    /// streaming started.
    private func read(
        scheduler: any ConcurrentDeliveryScheduler, connected: () -> Void
    ) throws(PostgresError) -> Bool {
        if snapshotSlot != nil {
            // Its temporary slot went with the connection: the next run takes the snapshot again.
            throw PostgresError(
                "the connection to PostgreSQL was lost during the initial snapshot, before its rows were all "
                    + "written; the next run takes the snapshot again")
        }
        let connection = try PostgresConnection(
            settings: settings.connection ?? "", replication: true, options: PostgresValues.sessionOptions)
        let exported = try prepare(connection)
        let stream = Stream(self, connection: connection, scheduler: scheduler)
        // Changes read before the connection broke go to the pipeline too: they were counted as
        // read (a reconnection reads on after them), so dropping them would confirm them unseen.
        defer { stream.flush() }
        if let exported {
            try readSnapshot(exported) { element, origin in
                stream.batch.append((element, origin))
                if stream.batch.count >= 500 {
                    stream.flush()
                    stream.waitForRoom()
                }
            }
            stream.flush()
        }
        try connection.startCopyBoth(
            "START_REPLICATION SLOT \(PostgresConnection.quote(snapshotSlot?.name ?? settings.slot)) LOGICAL "
                + "\(readUpTo) (proto_version '1', publication_names "
                + "\(PostgresConnection.literal(settings.publication)))")
        connected()
        while !isStopped {
            if try madeSlotFromSnapshot() { return true }
            // The pipeline is far behind: wait for it, still answering the server.
            if isFullAfterAWhile() {
                try stream.sendStatus()
                continue
            }
            // What has been read goes to the pipeline as soon as nothing more is at hand.
            var next = try connection.readCopyData(timeoutMilliseconds: 0)
            if next == nil {
                stream.flush()
                next = try connection.readCopyData(timeoutMilliseconds: 100)
            }
            guard let bytes = next else {
                if scheduler.now - stream.lastStatus >= .seconds(1) { try stream.sendStatus() }
                continue
            }
            try stream.take(ReplicationMessage(bytes))
        }
        stream.flush()
        try? stream.sendStatus(force: true)
        return false
    }

    /// Once every row of the snapshot is written: the slot is made for good where the temporary
    /// one is (true: it is read from there). A run killed before this takes the snapshot again.
    private func madeSlotFromSnapshot() throws(PostgresError) -> Bool {
        guard let snapshot = snapshotSlot, confirmations.isDone(snapshot.rows) else { return false }
        try snapshot.reader.query(
            "SELECT pg_copy_logical_replication_slot($1, $2, false)", [snapshot.name, settings.slot])
        snapshotSlot = nil
        return true
    }

    /// Whether a window's worth of changes still waits for the pipeline, after waiting up to
    /// 0.1 s for it to take some.
    private func isFullAfterAWhile() -> Bool {
        condition.withLock {
            if waiting >= settings.window, !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1)) }
            return waiting >= settings.window
        }
    }

    /// Reads every row of the publication's tables as the exported snapshot shows them, each an
    /// element `{op: "read", …, after: row}`, all of them one transaction at the slot's start.
    private func readSnapshot(
        _ exported: (slot: String, position: LogSequenceNumber, snapshot: String),
        emit: (Value, PostgresChange) -> Void
    ) throws(PostgresError) {
        let reader = try PostgresConnection(
            settings: settings.connection ?? "", options: PostgresValues.sessionOptions)
        let rows = confirmations.begin()
        snapshotSlot = (exported.slot, rows, reader)
        try reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try reader.execute("SET TRANSACTION SNAPSHOT \(PostgresConnection.literal(exported.snapshot))")
        let time = try reader.query("SELECT (extract(epoch FROM now()) * 1000)::bigint").rows.first?[0]
        let commitTime = time.flatMap { Int($0) } ?? 0
        let tables = try reader.query(
            "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2",
            [settings.publication])
        for table in tables.rows {
            let (schema, name) = (table[0] ?? "", table[1] ?? "")
            var number = 0
            try reader.eachRow(
                "SELECT * FROM \(PostgresConnection.quote(schema)).\(PostgresConnection.quote(name))"
            ) { row in
                if isStopped { return false }
                number += 1
                let element = PostgresChange.element(
                    op: "read", schema: schema, table: name, before: .null,
                    after: PostgresValues.object(of: row, numerics: settings.numerics), position: exported.position,
                    commitTime: commitTime)
                let origin = PostgresChange(
                    snapshotRow: "\(settings.slot):\(exported.position):\(schema).\(name):\(number)",
                    at: exported.position, transaction: rows, confirmations: confirmations)
                emit(element, origin)
                return true
            }
        }
        try reader.execute("COMMIT")
        confirmations.commit(rows, end: exported.position)
    }

    /// Makes the publication and the slot when `create` asks and they are missing; else checks
    /// that they exist, naming what is missing.
    /// With `snapshot`, a slot it makes is a temporary one whose snapshot is exported: its name,
    /// start and snapshot are returned, and the slot is made for good from it once the snapshot's
    /// rows are written.
    private func prepare(_ connection: PostgresConnection) throws(PostgresError) -> (
        slot: String, position: LogSequenceNumber, snapshot: String
    )? {
        let slot = PostgresConnection.literal(settings.slot)
        let publication = PostgresConnection.literal(settings.publication)
        let slots = try connection.query(
            "SELECT plugin, database = current_database() FROM pg_replication_slots WHERE slot_name = \(slot)")
        if let found = slots.rows.first {
            guard found[0] == "pgoutput" else {
                throw PostgresError(
                    "the replication slot '\(settings.slot)' decodes with \(found[0] ?? "nothing"), not pgoutput")
            }
        }
        let publications = try connection.query("SELECT 1 FROM pg_publication WHERE pubname = \(publication)")
        if publications.rows.isEmpty {
            guard settings.create else {
                throw PostgresError(
                    "the publication '\(settings.publication)' does not exist (give create: true and tables to make it, or CREATE PUBLICATION)"
                )
            }
            let tables = settings.tables.map { name in
                name.split(separator: ".").map { PostgresConnection.quote(String($0)) }.joined(separator: ".")
            }
            try connection.execute(
                "CREATE PUBLICATION \(PostgresConnection.quote(settings.publication)) "
                    + (tables.isEmpty ? "FOR ALL TABLES" : "FOR TABLE \(tables.joined(separator: ", "))"))
        } else if !settings.tables.isEmpty {
            let published = Set(
                try connection.query(
                    "SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = \(publication)"
                ).rows.compactMap { $0[0] })
            for table in settings.tables {
                let qualified = table.contains(".") ? table : "public.\(table)"
                guard published.contains(qualified) else {
                    throw PostgresError(
                        "the publication '\(settings.publication)' does not publish \(qualified) "
                            + "(ALTER PUBLICATION \(settings.publication) ADD TABLE \(table))")
                }
            }
        }
        if slots.rows.isEmpty {
            guard settings.create else {
                throw PostgresError(
                    "the replication slot '\(settings.slot)' does not exist (give create: true to make it)")
            }
            if settings.snapshot {
                let name = "rivulet_snapshot_\(getpid())_\(UInt16(truncatingIfNeeded: settings.slot.hashValue))"
                let made = try connection.query(
                    "CREATE_REPLICATION_SLOT \(PostgresConnection.quote(name)) TEMPORARY LOGICAL pgoutput EXPORT_SNAPSHOT"
                )
                guard let row = made.rows.first, row.count >= 3, let position = row[1].flatMap(LogSequenceNumber.init),
                    let snapshot = row[2]
                else { throw PostgresError("the server did not export a snapshot for the slot '\(settings.slot)'") }
                return (name, position, snapshot)
            }
            try connection.query(
                "CREATE_REPLICATION_SLOT \(PostgresConnection.quote(settings.slot)) LOGICAL pgoutput NOEXPORT_SNAPSHOT")
        }
        return nil
    }
}

extension PostgresReplication {
    /// One connection's reading of the slot: the transaction being read, the changes read and not
    /// yet handed to the pipeline (`batch`), and what was last told the server.
    fileprivate final class Stream {
        private unowned let owner: PostgresReplication
        private let connection: PostgresConnection
        private let scheduler: any ConcurrentDeliveryScheduler
        private var decoder = PgOutputDecoder()
        private var transaction: PostgresConfirmations.Transaction?
        /// Changes of a transaction cut by a lost connection, emitted before it was lost.
        private var skipping = 0
        private var commitTime: Int64 = 0
        private var commitPosition = LogSequenceNumber.zero
        /// Changes read, not yet handed to the pipeline's thread.
        var batch: [(Value, PostgresChange)] = []
        /// When the server was last told how far the slot may be confirmed, and what.
        private(set) var lastStatus: RxTime
        private var sentPosition = LogSequenceNumber.zero

        init(_ owner: PostgresReplication, connection: PostgresConnection, scheduler: any ConcurrentDeliveryScheduler) {
            self.owner = owner
            self.connection = connection
            self.scheduler = scheduler
            lastStatus = scheduler.now
        }

        /// Tells the server how far the slot may be confirmed: when that moved, when asked
        /// (`force`), and at least every 10 s.
        func sendStatus(force: Bool = false) throws(PostgresError) {
            let position = owner.confirmations.confirmed
            // How much of the server's log the slot keeps: what a stopped reader lets grow.
            let end = owner.serverEnd.value
            owner.meter?.gauge("postgres_slot_lag_bytes", Int(end &- min(position.value, end)))
            guard force || position != sentPosition || scheduler.now - lastStatus >= .seconds(10) else { return }
            try connection.writeCopyData(
                ReplicationMessage.standbyStatus(written: position, flushed: position, applied: position, clock: 0))
            owner.confirmations.told = position
            sentPosition = position
            lastStatus = scheduler.now
        }

        /// Waits while the pipeline has a window's worth of changes to emit.
        func waitForRoom() {
            let owner = owner
            owner.condition.withLock {
                while owner.waiting >= owner.settings.window, !owner.stopped {
                    _ = owner.condition.wait(until: Date(timeIntervalSinceNow: 0.1))
                }
            }
        }

        /// Hands the changes read to the pipeline's thread.
        func flush() {
            guard !batch.isEmpty else { return }
            let changes = SchedulerBound(batch)
            let owner = owner
            owner.condition.withLock { owner.waiting += batch.count }
            batch = []
            scheduler.enqueue {
                owner.target?.emit(changes.value)
                owner.condition.withLock {
                    owner.waiting -= changes.value.count
                    owner.condition.broadcast()
                }
            }
        }

        /// Takes one message of the replication stream: a keep-alive, or a change of the log.
        func take(_ message: ReplicationMessage) throws(PostgresError) {
            switch message {
            case .keepAlive(let end, _, let replyRequested):
                owner.serverEnd = max(owner.serverEnd, end)
                flush()
                owner.confirmations.idle(at: end)
                try sendStatus(force: replyRequested)
            case .logData(let start, let end, _, let payload):
                owner.serverEnd = max(owner.serverEnd, end)
                try take(decoder.decode(payload), at: start)
            }
        }

        /// Takes one decoded change at `start` in the log: a transaction begins or commits, or a
        /// row changed (an element for the pipeline, unless it was emitted before).
        private func take(_ message: PgOutputDecoder.Message, at start: LogSequenceNumber) throws(PostgresError) {
            switch message {
            case .begin(let commit, let time, _):
                commitTime = time
                commitPosition = commit
                if commit < owner.readUpTo {
                    transaction = nil  // read whole before the connection was lost
                    skipping = Int.max
                } else if let current = owner.current, current.commit == commit {
                    transaction = current.transaction  // cut by the lost connection
                    skipping = current.emitted
                } else {
                    let begun = owner.confirmations.begin()
                    transaction = begun
                    skipping = 0
                    owner.current = (commit, begun, 0)
                }
            case .commit(_, let end, _):
                if let transaction {
                    owner.confirmations.commit(transaction, end: end)
                    owner.readUpTo = end
                }
                transaction = nil
                owner.current = nil
                if batch.count >= 500 { flush() }
                if scheduler.now - lastStatus >= .seconds(1) { try sendStatus() }
            case .insert, .update, .delete, .truncate:
                if skipping > 0 {
                    skipping -= 1
                    return
                }
                guard let transaction else { throw PostgresError("a change outside a transaction") }
                owner.current?.emitted += 1
                // A checkpoint the run resumed from holds it: its effect is there already.
                if let coverage = owner.coverage, coverage.contains(commit: commitPosition, change: start) { return }
                // One origin for the message: a truncation's tables get ids :2, :3…
                let origin = PostgresChange(
                    slot: owner.settings.slot, position: start, commit: commitPosition, transaction: transaction,
                    confirmations: owner.confirmations, coverage: owner.coverage)
                for element in PostgresChange.elements(
                    message, position: start, commitTime: commitTime, numerics: owner.settings.numerics)
                {
                    batch.append((element, origin))
                }
                if batch.count >= 500 { flush() }
            case .relation, .other:
                break
            }
        }
    }
}
