@_spi(Components) import Pipeline
import SQLite
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A table read whole from a file — CSV with a header, JSON Lines of objects, or a SQLite table —
/// keyed by one of its columns, as Vector's enrichment tables are. Keys compare as text, so a
/// number 42 finds the row whose key is "42".
struct LookupTable: Sendable {
    /// The rows, by their key column's text.
    let rows: [String: Value]
    /// The columns the file has (for errors).
    let columns: [String]

    /// What a table cannot be read for: a message naming the file.
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    /// The message for a key column `key` that `path` lacks (`place`: where it was looked for),
    /// with the columns it has.
    static func noKeyColumn(_ key: String, in path: String, _ place: String, columns: [String]) -> Unreadable {
        Unreadable(
            description:
                "\(path)\(place) has no column '\(key)' to key the table by; its columns: \(columns.joined(separator: ", "))"
        )
    }

    /// The text a value is looked up by: a string itself, anything else its JSON.
    static func keyText(_ value: Value) -> String {
        if case .string(let text) = value { return text }
        return value.description
    }

    /// The kind of file, by its extension: .csv, .db/.sqlite/.sqlite3, else JSON Lines.
    enum Kind {
        case csv, jsonLines, sqlite

        init(path: String) {
            let lower = path.lowercased()
            if lower.hasSuffix(".csv") {
                self = .csv
            } else if [".db", ".sqlite", ".sqlite3"].contains(where: lower.hasSuffix) {
                self = .sqlite
            } else {
                self = .jsonLines
            }
        }
    }

    /// Reads `path` keyed by `key`; `sqliteTable` names the table of a SQLite file; `csv` how CSV
    /// is read (a header is required: it names the columns).
    static func read(path: String, key: String, sqliteTable: String?, csv: CSVRecords) throws -> Self {
        var read = ReadRows(path: path, key: key)
        switch Kind(path: path) {
        case .sqlite:
            guard let table = sqliteTable else {
                throw Unreadable(description: "'\(path)' is a SQLite file: say which table to read with 'table'")
            }
            try readTable(table, into: &read)
        case .csv, .jsonLines: try readLines(csv: Kind(path: path) == .csv ? csv : nil, into: &read)
        }
        return LookupTable(rows: read.rows, columns: read.columns)
    }

    /// The rows read so far, by key, and the columns they have.
    private struct ReadRows {
        let path: String
        let key: String
        var rows: [String: Value] = [:]
        var columns: [String] = []

        init(path: String, key: String) {
            self.path = path
            self.key = key
        }

        mutating func add(_ row: JSONObject, at place: String) throws {
            guard let value = row[key] else { throw noKeyColumn(key, in: "'\(path)'", " " + place, columns: row.keys) }
            rows[keyText(value)] = .object(row)
        }
    }

    /// Every row of the SQLite table `table`.
    private static func readTable(_ table: String, into read: inout ReadRows) throws {
        let (path, key) = (read.path, read.key)
        do {
            let database = try SQLiteDatabase(path: path, create: false, readOnly: true)
            let quoted = "\"" + table.replacing("\"", with: "\"\"") + "\""
            var failure: (any Error)?
            try database.eachRow("SELECT * FROM \(quoted)") { row in
                read.columns = row.columns
                var object = JSONObject()
                for (name, value) in zip(row.columns, row.values) { object[name] = value.element }
                do { try read.add(object, at: "table '\(table)'") } catch {
                    failure = error
                    return false
                }
                return true
            }
            if let failure { throw failure }
            if read.columns.isEmpty {
                read.columns = try database.query("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap {
                    $0.first ?? nil
                }
                if !read.columns.contains(key) {
                    throw noKeyColumn(key, in: "'\(path)'", " table '\(table)'", columns: read.columns)
                }
            }
        } catch let error as SQLiteError {
            throw Unreadable(description: "cannot read table '\(table)' of '\(path)': \(error)")
        }
    }

    /// Every line of a CSV file (`csv`, whose header names the columns) or a JSON Lines one.
    private static func readLines(csv: CSVRecords?, into read: inout ReadRows) throws {
        let (path, key) = (read.path, read.key)
        var names: [String]?
        var number = 0
        for line in try contents(of: path).split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            if line.isEmpty || line == [0x0D] { continue }
            guard let csv else {
                guard case .success(.object(let object)) = Result(catching: { try JSONParser.parse(Array(line)) })
                else {
                    throw Unreadable(description: "'\(path)' line \(number) is not a JSON object")
                }
                if read.columns.isEmpty { read.columns = object.keys }
                try read.add(object, at: "line \(number)")
                continue
            }
            do {
                let fields = try Array(line).withUnsafeBufferPointer { try csv.fields($0) }
                guard let header = names else {
                    names = fields
                    read.columns = fields
                    if !fields.contains(key) { throw noKeyColumn(key, in: "'\(path)'", "", columns: fields) }
                    continue
                }
                guard case .object(let object) = try csv.value(fields, names: header) else { continue }
                try read.add(object, at: "line \(number)")
            } catch let error as CSVRecords.Malformed {
                throw Unreadable(description: "'\(path)' line \(number): \(error)")
            }
        }
    }

    private static func contents(of path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw Unreadable(description: "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw Unreadable(description: "cannot read '\(path)': \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

/// A lookup table's file, read again when it changes: what identifies a version of it.
struct FileVersion: Equatable {
    let inode: UInt64
    let size: Int64
    let modified: timespec

    static func == (left: Self, right: Self) -> Bool {
        left.inode == right.inode && left.size == right.size && left.modified.tv_sec == right.modified.tv_sec
            && left.modified.tv_nsec == right.modified.tv_nsec
    }

    /// The file's version now, or nil if it is not there.
    static func of(_ path: String) -> FileVersion? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileVersion(inode: UInt64(status.st_ino), size: Int64(status.st_size), modified: status.st_mtim)
    }
}

/// One `lookup` operator's table, shared by every copy of it (partitions, resubscriptions): the
/// table read last, and the version of the file it was read from. A change found by `refresh` is
/// read again; a new version that cannot be read leaves the table as it was, with a warning.
final class LookupFile: Sendable {
    private struct Loaded {
        var table: LookupTable
        var version: FileVersion?
        /// The version that could not be read, so its warning is given once.
        var refused: FileVersion?
    }

    let path: String
    private let key: String
    private let sqliteTable: String?
    private let csv: CSVRecords
    private let loaded: Mutex<Loaded>

    /// Reads the table now; an error says why it cannot be.
    init(path: String, key: String, sqliteTable: String?, csv: CSVRecords) throws {
        self.path = path
        self.key = key
        self.sqliteTable = sqliteTable
        self.csv = csv
        let version = FileVersion.of(path)
        let table = try LookupTable.read(path: path, key: key, sqliteTable: sqliteTable, csv: csv)
        loaded = Mutex(Loaded(table: table, version: version))
    }

    /// The table as it is.
    var table: LookupTable { loaded.withLock { $0.table } }

    /// Reads the file again if it changed since it was read; `warn` is told (once a version) why a
    /// changed file could not be read. Returns the table to use.
    func refresh(warn: (String) -> Void) -> LookupTable {
        let now = FileVersion.of(path)
        let (table, refusal) = loaded.withLock { loaded -> (LookupTable, String?) in
            guard now != loaded.version, now != loaded.refused else { return (loaded.table, nil) }
            do {
                // A file being written is read once it settles: another check reads it again.
                loaded.table = try LookupTable.read(path: path, key: key, sqliteTable: sqliteTable, csv: csv)
                loaded.version = now
                loaded.refused = nil
                return (loaded.table, nil)
            } catch {
                loaded.refused = now
                return (loaded.table, "\(error); the table read before is kept")
            }
        }
        if let refusal { warn(refusal) }
        return table
    }
}
