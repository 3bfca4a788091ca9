import CSQLite

/// A connection to one SQLite database, with the few calls the state store needs: statements
/// with text and integer parameters, and errors that carry SQLite's message.
final class SQLiteDatabase {
    private var handle: OpaquePointer?

    /// Opens (creating if `create`) the database at `path`.
    init(path: String, create: Bool) throws(SQLiteError) {
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let error = SQLiteError(code: status, message: handle.map { String(cString: sqlite3_errmsg($0)) })
            sqlite3_close(handle)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 2000)
    }

    deinit {
        sqlite3_close(handle)
    }

    /// Runs statements that return nothing.
    func execute(_ sql: String) throws(SQLiteError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status) }
    }

    /// A bound parameter.
    enum Parameter {
        case text(String)
        case integer(Int)
    }

    /// Runs one statement with `parameters`; returns its rows, each column as text (nil for NULL).
    @discardableResult
    func query(_ sql: String, _ parameters: [Parameter] = []) throws(SQLiteError) -> [[String?]] {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK else { throw error(prepared) }
        defer { sqlite3_finalize(statement) }
        // SQLite copies the text (SQLITE_TRANSIENT), so the Swift strings need not outlive the call.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, parameter) in parameters.enumerated() {
            switch parameter {
            case .text(let text): sqlite3_bind_text(statement, Int32(index + 1), text, -1, transient)
            case .integer(let value): sqlite3_bind_int64(statement, Int32(index + 1), sqlite3_int64(value))
            }
        }
        var rows: [[String?]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw error(step) }
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) }
                })
        }
    }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, message: handle.map { String(cString: sqlite3_errmsg($0)) })
    }
}

/// A failed SQLite call: its result code and message.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code.
    let code: Int32
    let message: String?

    /// The primary result code (SQLITE_FULL, SQLITE_NOTADB, ...).
    var primary: Int32 { code & 0xFF }

    var description: String { message ?? String(cString: sqlite3_errstr(code)) }
}
