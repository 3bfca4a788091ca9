import CPostgres

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to a PostgreSQL server through libpq: statements with bound parameters (never
/// built into the SQL text), rows read one at a time, and the copy-both stream of logical
/// replication. Used by the `postgres` source and sink from one thread at a time; only
/// `cancel()` may be called from another.
public final class PostgresConnection {
    private let handle: OpaquePointer
    private let canceller: OpaquePointer?

    /// Connects with `settings`: a URL (`postgresql://user@host:5432/db?sslmode=require`), libpq's
    /// `key=value` settings, or empty for libpq's environment (`PGHOST`, `PGPASSWORD`…) alone. A
    /// replication connection (`replication: true`) also runs the replication commands; `options`
    /// are server settings for the session (`-c TimeZone=UTC`).
    public init(
        settings: String, replication: Bool = false, options: String? = nil, applicationName: String = "rivulet"
    ) throws(PostgresError) {
        // libpq is loaded here, by the first connection of the run (see CPostgres).
        if let problem = rivulet_postgres_load_error() { throw PostgresError(String(cString: problem)) }
        var keywords = ["dbname", "fallback_application_name"]
        var values = [settings, applicationName]
        if let options {
            keywords.append("options")
            values.append(options)
        }
        if replication {
            keywords.append("replication")
            values.append("database")
        }
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection else { throw PostgresError("libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(message, connectionLost: true)
        }
        // Notices (`relation … already exists, skipping`) are the server chatting, not errors:
        // libpq's default prints them on stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
        canceller = PQgetCancel(connection)
    }

    deinit {
        if let canceller { PQfreeCancel(canceller) }
        PQfinish(handle)
    }

    /// The server's version as a number (150018 for 15.18).
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Whether the connection is encrypted with TLS.
    public var usesTLS: Bool { PQsslInUse(handle) == 1 }

    /// Whether the connection still works, as far as libpq knows.
    public var isOpen: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Asks the server to stop the statement running now (safe from any thread); the statement
    /// then fails with SQLSTATE 57014.
    public func cancel() {
        guard let canceller else { return }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = PQcancel(canceller, &buffer, Int32(buffer.count))
    }

    /// The result of a statement: its columns, their types, and every row as text (nil for NULL).
    public struct Result: Sendable {
        /// The columns' names, in order.
        public let columns: [String]
        /// Each column's type, as its OID (see `PostgresType`).
        public let types: [UInt32]
        /// The rows, each value in PostgreSQL's text form.
        public let rows: [[String?]]
        /// The rows an INSERT, UPDATE or DELETE touched.
        public let affected: Int
    }

    /// Runs one statement with `parameters` bound as `$1`, `$2`… (nil for NULL, the others in
    /// text form, typed by the server) and returns all of its rows. Without parameters it goes
    /// by the simple protocol, the only one a replication connection speaks.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> Result {
        let result =
            parameters.isEmpty
            ? PQexec(handle, sql)
            : Self.withOptionalCStrings(parameters) { pointers in
                PQexecParams(handle, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
            }
        defer { PQclear(result) }
        try check(result)
        return Self.read(result)
    }

    /// Runs statements without parameters (several may be separated by `;`).
    public func execute(_ sql: String) throws(PostgresError) {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs a query and hands its rows to `body` one at a time as the server sends them, so a
    /// large result is never held whole; `body` returns false to stop early (the statement is
    /// cancelled). The columns and types come with every row.
    public func eachRow(
        _ sql: String, _ parameters: [String?] = [], _ body: (_ row: Row) -> Bool
    ) throws(PostgresError) {
        let sent = Self.withOptionalCStrings(parameters) { pointers in
            PQsendQueryParams(handle, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
        }
        guard sent == 1 else { throw error(nil) }
        PQsetSingleRowMode(handle)
        var failure: PostgresError?
        var stopped = false
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_SINGLE_TUPLE:
                guard !stopped, failure == nil else { continue }
                let read = Self.read(result)
                if !body(Row(columns: read.columns, types: read.types, values: read.rows[0])) {
                    stopped = true
                    cancel()
                }
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                continue
            default:
                // A statement cancelled because `body` stopped is not a failure.
                if !stopped, failure == nil { failure = error(result) }
            }
        }
        if let failure { throw failure }
    }

    /// One row of `eachRow`.
    public struct Row: Sendable {
        /// The columns' names, in order.
        public let columns: [String]
        /// Each column's type OID.
        public let types: [UInt32]
        /// The values in text form, nil for NULL.
        public let values: [String?]
    }

    // MARK: Copy in (bulk writes)

    /// Runs `COPY … FROM STDIN` (`sql`) and sends `rows` in COPY's text format: the fastest way
    /// to write many rows, one statement however many there are. Values are in text form, nil for
    /// NULL; the server converts each to its column's type as it does a bound parameter.
    public func copyIn(_ sql: String, rows: [[String?]]) throws(PostgresError) {
        let started = PQexec(handle, sql)
        let status = PQresultStatus(started)
        if status != PGRES_COPY_IN {
            defer { PQclear(started) }
            try check(started)
            throw PostgresError("the server did not start a copy: \(sql)")
        }
        PQclear(started)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.copyChunk + 1024)
        var sendFailed = false
        func send() {
            guard !buffer.isEmpty, !sendFailed else { return }
            let sent = buffer.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
            }
            if sent != 1 { sendFailed = true }
            buffer.removeAll(keepingCapacity: true)
        }
        for row in rows {
            CopyText.append(row, to: &buffer)
            if buffer.count >= Self.copyChunk { send() }
        }
        send()
        // The copy's end, then its result: a value a column refuses fails the whole copy here.
        let ended = sendFailed ? PQputCopyEnd(handle, "the client could not send the rows") : PQputCopyEnd(handle, nil)
        var failure: PostgresError? = ended == 1 ? nil : error(nil)
        while let result = PQgetResult(handle) {
            if failure == nil, PQresultStatus(result) != PGRES_COMMAND_OK { failure = error(result) }
            PQclear(result)
        }
        if let failure { throw failure }
        if sendFailed { throw error(nil) }
    }

    /// How many bytes of rows are sent to the server at once.
    static let copyChunk = 256 * 1024

    // MARK: Copy-both (logical replication)

    /// Sends a replication command that starts a copy-both stream (`START_REPLICATION`).
    public func startCopyBoth(_ command: String) throws(PostgresError) {
        let result = PQexec(handle, command)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COPY_BOTH else {
            try check(result)
            throw PostgresError("the server did not start streaming: \(command)")
        }
    }

    /// The next message of the copy-both stream, waiting up to `timeoutMilliseconds` for one; nil
    /// when none came in that time. Throws when the stream ended or the connection failed.
    public func readCopyData(timeoutMilliseconds: Int32) throws(PostgresError) -> [UInt8]? {
        var waited = false
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let count = PQgetCopyData(handle, &buffer, 1)
            if count > 0, let buffer {
                defer { PQfreemem(buffer) }
                return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(count)) {
                    Array(UnsafeBufferPointer(start: $0, count: Int(count)))
                }
            }
            if count == -1 {
                // The server ended the stream: its final result says why.
                var failure = PostgresError("the server ended the replication stream", connectionLost: true)
                while let result = PQgetResult(handle) {
                    if PQresultStatus(result) == PGRES_FATAL_ERROR { failure = error(result) }
                    PQclear(result)
                }
                throw failure
            }
            if count < -1 { throw error(nil) }
            if waited { return nil }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready < 0, errno != EINTR { throw PostgresError("poll failed: errno \(errno)", connectionLost: true) }
            guard PQconsumeInput(handle) == 1 else { throw error(nil) }
            waited = ready <= 0
        }
    }

    /// Sends one message on the copy-both stream and flushes it.
    public func writeCopyData(_ bytes: [UInt8]) throws(PostgresError) {
        let sent = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
        }
        guard sent == 1, PQflush(handle) == 0 else { throw error(nil) }
    }

    // MARK: Identifiers

    /// `name` as an SQL identifier, quoted (`"Orders"`, `"a""b"`), so any table or column name is
    /// safe in a statement.
    public static func quote(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// `text` as an SQL string literal (for the replication commands, which take no parameters).
    public static func literal(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
    }

    // MARK: Private

    private func check(_ result: OpaquePointer?) throws(PostgresError) {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE, PGRES_COPY_BOTH: return
        default: throw error(result)
        }
    }

    /// The error a failed call left: the result's message and SQLSTATE, else the connection's.
    private func error(_ result: OpaquePointer?) -> PostgresError {
        let lost = PQstatus(handle) != CONNECTION_OK
        if let result, let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))) {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            return PostgresError(String(cString: message), sqlState: state, connectionLost: lost)
        }
        let message = String(cString: PQerrorMessage(handle))
        return PostgresError(message.isEmpty ? "the connection failed" : message, connectionLost: lost)
    }

    private static func read(_ result: OpaquePointer?) -> Result {
        let columnCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        let columns = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
        let types = (0..<columnCount).map { UInt32(PQftype(result, Int32($0))) }
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<Int32(rowCount) {
            rows.append(
                (0..<Int32(columnCount)).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                })
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return Result(columns: columns, types: types, rows: rows, affected: affected)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }

    private static func withOptionalCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { UnsafePointer($0) })
    }
}
