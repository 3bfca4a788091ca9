import CSQLite
@_spi(Host) @_spi(Components) import Pipeline
import SQLite

#if canImport(Glibc)
    import Glibc
#endif

/// Where `rivulet run --state PATH` keeps its checkpoints: an SQLite database (WAL mode) holding
/// one checkpoint per pipeline, each written in one transaction, so a crash leaves the last
/// committed checkpoint whole. A runner locks its pipeline's row for the whole run: two runners
/// of one pipeline must not share a checkpoint.
public final class StateStore {
    /// One pipeline's last checkpoint.
    public struct Checkpoint {
        /// The pipeline's name (`name:` in its file, else its path).
        public let pipeline: String
        /// Its components when the checkpoint was taken (see `CheckpointPlan.shape`).
        public let shape: [String]
        /// Every stateful component's state, by component key.
        public let state: [String: Value]
        /// Whether the run completed (the next run starts over unless it resumes on purpose).
        public let complete: Bool
        /// How many checkpoints the pipeline has committed, over all its runs.
        public let sequence: Int
        /// When it was taken, in seconds since 1970.
        public let savedAt: Int
    }

    /// The file.
    public let path: String
    private let database: SQLiteDatabase
    private var lockDescriptor: Int32 = -1

    /// The SQLite `application_id` that marks a Rivulet state store ("RIVS").
    static let applicationID: Int32 = 0x5249_5653
    static let schemaVersion = 1

    /// Opens the store at `path`, creating it if there is no file there (unless `readOnly`: then
    /// only to read it, which a store the process may not write allows). A file that is not a
    /// Rivulet state store (another database, or not a database) is refused and left untouched.
    public init(path: String, readOnly: Bool = false) throws(StateStoreError) {
        self.path = path
        do {
            database = try SQLiteDatabase(path: path, create: !readOnly, readOnly: readOnly)
        } catch {
            throw StateStoreError("cannot open the state store '\(path)': \(error)\(Self.hint(for: error, path: path))")
        }
        do {
            // Who it is first: switching another program's database to WAL would change it for good.
            let identity = try database.query("PRAGMA application_id")
            let tables = try database.query("SELECT count(*) FROM sqlite_master")
            let id = Int32((identity.first?.first ?? nil) ?? "0") ?? 0
            let tableCount = Int((tables.first?.first ?? nil) ?? "0") ?? 0
            if id == 0 && tableCount == 0 && !readOnly {
                try database.execute("PRAGMA journal_mode = WAL;")
                try database.execute(
                    """
                    BEGIN IMMEDIATE;
                    PRAGMA application_id = \(Self.applicationID);
                    PRAGMA user_version = \(Self.schemaVersion);
                    CREATE TABLE IF NOT EXISTS checkpoints (
                        pipeline TEXT PRIMARY KEY, shape TEXT NOT NULL, state TEXT NOT NULL,
                        complete INTEGER NOT NULL, sequence INTEGER NOT NULL, saved_at INTEGER NOT NULL);
                    COMMIT;
                    """)
            } else if id != Self.applicationID {
                throw StateStoreError(
                    "'\(path)' is a database but not a Rivulet state store; it was left as it is",
                    hint: "give --state a new file, or the file of an earlier --state run")
            }
            if !readOnly { try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;") }
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(
                "'\(path)' cannot be used as a state store: \(error)\(Self.hint(for: error, path: path))",
                hint: "it was left as it is; give --state a new file")
        }
    }

    deinit {
        if lockDescriptor >= 0 { close(lockDescriptor) }
    }

    private static func hint(for error: any Error, path: String) -> String {
        guard let error = error as? SQLiteError else { return "" }
        switch error.primary {
        case SQLITE_CANTOPEN, SQLITE_READONLY:
            return " (the store and its folder must be writable: SQLite keeps a journal beside the file)"
        case SQLITE_NOTADB: return " (the file is not an SQLite database)"
        default: return ""
        }
    }

    /// Lets go of the pipelines this store locked (a run that ends while the process goes on,
    /// to be followed by another run of the same pipeline).
    public func unlockAll() {
        if lockDescriptor >= 0 { close(lockDescriptor) }
        lockDescriptor = -1
    }

    /// Takes the lock of `pipeline` for as long as the store is open, or throws if another
    /// runner holds it. The lock is an open-file-description lock on a byte of the database file
    /// far above what SQLite uses, so it ends with the process however the process ends.
    public func lock(pipeline: String) throws(StateStoreError) {
        if lockDescriptor < 0 { lockDescriptor = open(path, O_RDWR | O_CLOEXEC) }
        guard lockDescriptor >= 0 else {
            throw StateStoreError("cannot lock '\(path)': \(String(cString: strerror(errno)))")
        }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(1 << 40) + off_t(Self.hash(pipeline) & 0xFFFF_FFFF)
        lock.l_len = 1
        // F_OFD_SETLK: released when this descriptor closes or the process ends (even on SIGKILL).
        let openFileDescriptionSetLock: Int32 = 37
        if fcntl(lockDescriptor, openFileDescriptionSetLock, &lock) != 0 {
            if errno == EAGAIN || errno == EACCES {
                throw StateStoreError(
                    "another runner of pipeline '\(pipeline)' is using the state store '\(path)'",
                    hint: "two runners must not share one checkpoint: stop the other, or give this one its own --state")
            }
            throw StateStoreError("cannot lock '\(path)': \(String(cString: strerror(errno)))")
        }
    }

    /// FNV-1a: a stable hash of a pipeline's name, for its lock's byte.
    static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// The last checkpoint of `pipeline`, if it has one.
    public func load(_ pipeline: String) throws(StateStoreError) -> Checkpoint? {
        try rows(where: "WHERE pipeline = ?", [.text(pipeline)]).first
    }

    /// Every pipeline's last checkpoint, by name.
    public func all() throws(StateStoreError) -> [Checkpoint] {
        try rows(where: "ORDER BY pipeline", [])
    }

    private func rows(where clause: String, _ parameters: [SQLiteDatabase.Parameter]) throws(StateStoreError)
        -> [Checkpoint]
    {
        let rows: [[String?]]
        do {
            rows = try database.query(
                "SELECT pipeline, shape, state, complete, sequence, saved_at FROM checkpoints \(clause)", parameters)
        } catch {
            throw StateStoreError("cannot read the state store '\(path)': \(error)")
        }
        return try rows.map { row throws(StateStoreError) in
            let state: Value
            do { state = try JSONParser.parse(row[2] ?? "{}") } catch {
                throw StateStoreError("the checkpoint of '\(row[0] ?? "")' in '\(path)' is damaged: \(error)")
            }
            // Not an object, or nothing for a run to resume with: resuming would start over while
            // saying it resumes.
            guard let object = state.objectValue else {
                throw StateStoreError(
                    "the checkpoint of '\(row[0] ?? "")' in '\(path)' is damaged: its state is \(state.typeName), not an "
                        + "object", hint: "reset it to start over: rivulet state \(path) --reset \(row[0] ?? "")")
            }
            if object.isEmpty && row[3] != "1" && !(row[1] ?? "").isEmpty {
                throw StateStoreError(
                    "the checkpoint of '\(row[0] ?? "")' in '\(path)' is damaged: it holds no state for any of its "
                        + "components", hint: "reset it to start over: rivulet state \(path) --reset \(row[0] ?? "")")
            }
            var entries: [String: Value] = [:]
            for (key, value) in object { entries[key] = value }
            return Checkpoint(
                pipeline: row[0] ?? "", shape: (row[1] ?? "").split(separator: "\n").map(String.init), state: entries,
                complete: row[3] == "1", sequence: Int(row[4] ?? "0") ?? 0, savedAt: Int(row[5] ?? "0") ?? 0)
        }
    }

    /// Commits `state` as the checkpoint of `pipeline`, in one transaction: either all of it is
    /// kept, or (a full disk, a write error) the previous checkpoint stays as it was.
    public func save(_ pipeline: String, shape: [String], state: Value, complete: Bool) throws(StateStoreError) {
        var bytes: [UInt8] = []
        JSONSerializer.write(state, to: &bytes)
        do {
            try database.query(
                """
                INSERT INTO checkpoints (pipeline, shape, state, complete, sequence, saved_at)
                VALUES (?1, ?2, ?3, ?4, 1, ?5)
                ON CONFLICT (pipeline) DO UPDATE SET shape = ?2, state = ?3, complete = ?4,
                    sequence = sequence + 1, saved_at = ?5
                """,
                [
                    .text(pipeline), .text(shape.joined(separator: "\n")),
                    .text(String(decoding: bytes, as: UTF8.self)),
                    .integer(complete ? 1 : 0), .integer(time(nil)),
                ])
        } catch {
            throw StateStoreError(
                "cannot save a checkpoint to '\(path)': \(error); the last good checkpoint is kept", isRunTime: true)
        }
    }

    /// Forgets `pipeline`'s checkpoint; false if it had none.
    public func reset(_ pipeline: String) throws(StateStoreError) -> Bool {
        do {
            let found = try database.query("SELECT 1 FROM checkpoints WHERE pipeline = ?", [.text(pipeline)])
            try database.query("DELETE FROM checkpoints WHERE pipeline = ?", [.text(pipeline)])
            return !found.isEmpty
        } catch {
            throw StateStoreError("cannot change the state store '\(path)': \(error)")
        }
    }
}

/// A state store that cannot be opened, locked, read or written.
public struct StateStoreError: Error, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// What to do about it.
    public let hint: String?
    /// Whether it happened while the pipeline ran (exit 1) rather than before (exit 2).
    public let isRunTime: Bool

    /// An error saying `message`, with `hint` for what to do.
    public init(_ message: String, hint: String? = nil, isRunTime: Bool = false) {
        self.message = message
        self.hint = hint
        self.isRunTime = isRunTime
    }

    /// The message, and the hint on a line of its own.
    public var description: String {
        "error: \(message)" + (hint.map { "\n  hint: \($0)" } ?? "")
    }
}
