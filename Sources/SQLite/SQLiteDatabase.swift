import CSQLite

/// A connection to one SQLite database: statements with bound values, rows read back typed, and
/// errors that carry SQLite's message. Used by the state store and the `sqlite` source and sink.
public final class SQLiteDatabase {
    private var handle: OpaquePointer?
    private var cache: [String: OpaquePointer] = [:]

    /// Opens (creating if `create`) the database at `path`; a locked database is waited for up to
    /// `busyTimeout` milliseconds before a statement fails with SQLITE_BUSY.
    public init(path: String, create: Bool, readOnly: Bool = false, busyTimeout: Int = 2000) throws(SQLiteError) {
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        let flags = access | SQLITE_OPEN_NOMUTEX
        // libsqlite3 is loaded here, by the first database opened (see CSQLite).
        if let problem = rivulet_sqlite_load_error() {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: String(cString: problem))
        }
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let error = SQLiteError(code: status, message: handle.map { String(cString: sqlite3_errmsg($0)) })
            sqlite3_close(handle)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Int32(clamping: busyTimeout))
    }

    deinit {
        for statement in cache.values { sqlite3_finalize(statement) }
        sqlite3_close(handle)
        stopCheck?.release()
    }

    /// Runs statements that return nothing.
    public func execute(_ sql: String) throws(SQLiteError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status) }
    }

    /// A value bound to a statement, or read from a row.
    public enum Parameter: Equatable, Sendable {
        case text(String)
        case integer(Int)
        case real(Double)
        case null
        /// A BLOB's bytes.
        case blob([UInt8])
    }

    /// Runs one statement with `parameters`; returns its rows, each column as text (nil for NULL).
    @discardableResult
    public func query(_ sql: String, _ parameters: [Parameter] = []) throws(SQLiteError) -> [[String?]] {
        try rows(sql, parameters).map { row in
            row.values.map { value in
                switch value {
                case .text(let text): text
                case .integer(let number): String(number)
                case .real(let number): String(number)
                case .null: nil
                case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
                }
            }
        }
    }

    /// One result row: its column names and typed values.
    public struct Row {
        /// The columns' names, in order.
        public let columns: [String]
        /// The values, in the same order.
        public let values: [Parameter]
    }

    /// Runs one statement (prepared once and kept, since a sink runs the same insert many times)
    /// with `parameters`; returns its rows with their types.
    public func rows(_ sql: String, _ parameters: [Parameter] = []) throws(SQLiteError) -> [Row] {
        var rows: [Row] = []
        try eachRow(sql, parameters) { row in
            rows.append(row)
            return true
        }
        return rows
    }

    /// Runs one statement with `parameters`, handing `body` each row as SQLite makes it (an
    /// endless recursive query is read as far as `body` wants); `body` returns false to stop.
    public func eachRow(_ sql: String, _ parameters: [Parameter] = [], _ body: (Row) -> Bool) throws(SQLiteError) {
        let statement: OpaquePointer
        if let cached = cache[sql] {
            statement = cached
        } else {
            var prepared: OpaquePointer?
            let status = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
            guard status == SQLITE_OK, let prepared else { throw error(status) }
            cache[sql] = prepared
            statement = prepared
        }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        // SQLite copies the text (SQLITE_TRANSIENT), so the Swift strings need not outlive the call.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, parameter) in parameters.enumerated() {
            let position = Int32(index + 1)
            switch parameter {
            // By its length in bytes: a NUL inside it is kept (with -1 the text ended there).
            case .text(let text): sqlite3_bind_text(statement, position, text, Int32(text.utf8.count), transient)
            case .blob(let bytes): sqlite3_bind_blob(statement, position, bytes, Int32(bytes.count), transient)
            case .integer(let value): sqlite3_bind_int64(statement, position, sqlite3_int64(value))
            case .real(let value): sqlite3_bind_double(statement, position, value)
            case .null: sqlite3_bind_null(statement, position)
            }
        }
        let count = sqlite3_column_count(statement)
        let columns = (0..<count).map { String(cString: sqlite3_column_name(statement, $0)) }
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return }
            guard step == SQLITE_ROW else { throw error(step) }
            let values = (0..<count).map { column -> Parameter in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: return .integer(Int(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
                case SQLITE_NULL: return .null
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    guard let start = sqlite3_column_blob(statement, column), count > 0 else { return .blob([]) }
                    return .blob(Array(UnsafeRawBufferPointer(start: start, count: count)))
                default:
                    // By its length in bytes, not up to its first NUL.
                    guard let start = sqlite3_column_text(statement, column) else { return .text("") }
                    let count = Int(sqlite3_column_bytes(statement, column))
                    return .text(String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self))
                }
            }
            guard body(Row(columns: columns, values: values)) else { return }
        }
    }

    /// Makes every statement stop (failing with SQLITE_INTERRUPT) once `stop` says so, checked
    /// every few thousand steps of SQLite's machine: a query that sorts millions of rows before
    /// its first one is not waited for by a signal.
    public func interrupt(when stop: @escaping () -> Bool) {
        let box = Unmanaged.passRetained(StopCheck(stop))
        stopCheck?.release()
        stopCheck = box
        sqlite3_progress_handler(
            handle, 10_000,
            { pointer in Unmanaged<StopCheck>.fromOpaque(pointer!).takeUnretainedValue().stop() ? 1 : 0 },
            box.toOpaque())
    }

    private final class StopCheck {
        let stop: () -> Bool
        init(_ stop: @escaping () -> Bool) { self.stop = stop }
    }

    private var stopCheck: Unmanaged<StopCheck>?

    /// `name` as an SQL identifier, quoted (a double quote in it doubled).
    public static func quote(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// The number of rows the last statement changed.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, message: handle.map { String(cString: sqlite3_errmsg($0)) })
    }
}

/// A failed SQLite call: its result code and message.
public struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code.
    public let code: Int32
    /// SQLite's message.
    public let message: String?

    /// The primary result code (SQLITE_FULL, SQLITE_NOTADB, ...).
    public var primary: Int32 { code & 0xFF }

    /// Whether the database was locked by another connection for longer than the busy timeout.
    public var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }

    /// SQLite's message, or the text of its code.
    public var description: String { message ?? String(cString: sqlite3_errstr(code)) }
}
