@_spi(Components) import Pipeline
@_spi(Components) import Reactive

#if canImport(Glibc)
    import Glibc
#endif

private enum FileFormat: String, ParameterChoice {
    case auto, jsonl, json, csv
}
private enum WriteMode: String, ParameterChoice {
    case overwrite, append
}
private enum Key {
    static let path = Parameter<String>(
        "path", doc: "The file, relative to the pipeline file.", example: "out/results.jsonl")
    static let format = Parameter<FileFormat>(
        "format", default: .auto, doc: "auto goes by the extension: .json, .csv, anything else JSON Lines.")
    static let mode = Parameter<WriteMode>(
        "mode", default: .overwrite, doc: "Replace the file, or add to it (jsonl and csv).")
    static let columns = Parameter<[String]?>(
        "columns", doc: "CSV: the fields, in order (default: the keys of the first element).")
    static let flushAfter = Parameter<RxTimeInterval>(
        "flushAfter", default: .seconds(1),
        doc:
            "The longest a line waits in memory before it is written to the file (64 KiB buffered are written at once). Longer batches fewer, larger writes; JSON is written when the run ends.",
        example: "10s"
    ).atLeast(RxTimeInterval.clockResolution)
}

extension BuiltinComponents {
    /// `file: PATH` — writes elements to a file as JSON Lines, JSON or CSV.
    public static let file = ComponentSpec(
        name: "file",
        summary: "Writes elements to a file: JSON Lines (whole lines only), a JSON array, or CSV.",
        docs: """
            JSON Lines and CSV are written in whole lines, a line as the element gave it (no padding: two \
            runs with the same input write the same bytes). A line reaches the file at most `flushAfter` \
            (1 s) after it was received, so `tail -f` shows a live source's output as it comes (on the \
            virtual clock, at 64 KiB, each checkpoint and the end). Linux may \
            cut a write at a 4 KiB page boundary when a process is killed with SIGKILL, which can leave a \
            partial last line: the next run that opens the file to add to it (`mode: append`, or resuming \
            with --state) cuts that partial line first and warns, so the file again holds whole lines. \
            JSON is written to a temporary file beside the target and renamed over it when the pipeline \
            ends (completion, failure or a signal), so the target is never half written. The file is \
            flushed and closed on completion, error, SIGINT and SIGTERM.
            """,
        parameters: [Key.path, Key.format, Key.mode, Key.columns, Key.flushAfter],
        primary: Key.path,
        example: "sink: { file: { path: out/articles.jsonl } }",
        validate: { values, validation in validation.requireFolder(Key.path, in: values, writing: "a file") },
        checkpointing: .depending(
            "JSON Lines and CSV: keeps the length of the file it wrote and synced, to which a resumed run cuts it back "
                + "(exactly-once); JSON cannot be checkpointed"
        ) { values in
            fileFormat(values) == .json
                ? .unsupported("a JSON document is written whole when the run ends; write JSON Lines or CSV")
                : .keepsState("the length of the file it had written and synced, to which a resumed run cuts it back")
        },
        delivery: Delivery(
            .exactlyOnce,
            "JSON Lines and CSV with --state: a resumed run cuts the file back to the last checkpoint and writes on; at-least-once otherwise; lines are written whole, and before a durable source's message is acknowledged"
        ),
        factory: .sink { parameters, context in
            let path = context.resolvePath(parameters[Key.path])
            let format = fileFormat(parameters)
            return try FileSink(
                path: path, format: format.rawValue, append: parameters[Key.mode] == .append,
                columns: parameters[Key.columns] ?? [], flushAfter: parameters[Key.flushAfter],
                context: context)
        })
}

/// The format a `file` sink writes, `auto` resolved by the path's extension.
private func fileFormat(_ values: ParameterValues) -> FileFormat {
    let format = values[Key.format]
    guard format == .auto else { return format }
    let path = values[Key.path]
    return path.hasSuffix(".json") ? .json : (path.hasSuffix(".csv") ? .csv : .jsonl)
}

final class FileSink: FlushingSink {
    private let path: String
    private let temporaryPath: String?
    private let descriptor: Int32
    /// The file's inode, kept in checkpoints (a file replaced under its name is not resumed into).
    private let inode: Int?
    private let writer: LineWriter
    /// Whether the file's pages are written back as it grows (a regular file), for tests.
    var writesBack: Bool { writer.startsWriteBack }
    /// Whether the existing file was cut to nothing on another thread, for tests.
    var truncatedInBackground: Bool { writer.truncatedInBackground }
    /// The size from which an existing output is cut on another thread rather than by O_TRUNC.
    static let truncatedInBackgroundFrom = 1 << 20
    private enum Format {
        case jsonLines, json, csv
    }

    private let format: Format
    private var columns: [String]
    private var wroteHeader: Bool
    private var count = 0
    @exclusivity(unchecked)
    private var bytes: [UInt8] = []
    private var closed = false
    private let context: ComponentContext
    private let scheduler: any SchedulerType
    private let flushAfter: RxTimeInterval
    /// On the virtual clock time does not pass for a reader, and a timer of the sink's own would
    /// sit among the run's timers (which checkpoints take only when none are due together): there
    /// lines are written at 64 KiB, at each checkpoint and at the end. Decided once, not per line.
    private let flushesOnATimer: Bool
    private let flushTimer = FlushTimer()

    /// The pending flush, shared with the timer's closure rather than the sink itself: a weak
    /// reference to the sink would give it a side table, and each of the per-line retains of
    /// it (the run's observer calls `receive` through it) the slow path of reference counting.
    private final class FlushTimer {
        var pending: (any Disposable)?
        /// Set when the sink closes: a timer that fires after does nothing.
        var cancelled = false
    }

    init(
        path: String, format: String, append: Bool, columns: [String], flushAfter: RxTimeInterval,
        context: ComponentContext
    ) throws {
        self.path = path
        self.context = context
        self.scheduler = context.scheduler
        self.flushAfter = flushAfter
        self.flushesOnATimer = !(context.scheduler is VirtualTimeScheduler)
        self.format = format == "json" ? .json : (format == "csv" ? .csv : .jsonLines)
        self.columns = columns
        // JSON is written beside the target and renamed over it at the end, unless the target is
        // not a regular file (a device such as /dev/stdout, a FIFO), which is written in place.
        var status = stat()
        let exists = stat(path, &status) == 0
        let special = exists && (status.st_mode & S_IFMT) != S_IFREG
        if format == "json" && !special { Self.removeLeftovers(of: path) }
        temporaryPath = format == "json" && !special ? path + ".tmp-\(getpid())" : nil
        let target = temporaryPath ?? path
        // Resumed from a checkpoint, the file is cut back to what the checkpoint committed, and
        // written on from there: what was written after it is written again, once.
        var append = append
        let restored = context.restoredState
        if let restored, let committed = restored["length"]?.intValue, format != "json" {
            try Self.checkUnchanged(path, since: restored, committed: committed, context: context)
            if truncate(path, off_t(committed)) != 0 && !(errno == ENOENT && committed == 0) {
                throw context.error("cannot cut '\(path)' back to its checkpoint: \(String(cString: strerror(errno)))")
            }
            append = true
        } else if append && format != "json" && !special {
            try Self.cutPartialLastLine(of: path, context: context)
        }
        // An old output of 1 MB or more is cut on another thread as the run starts, not by O_TRUNC:
        let truncatesLater =  // freeing its blocks waits for the device (`LineWriter`)
            !append && format != "json" && exists && !special && Int(status.st_size) >= Self.truncatedInBackgroundFrom
        let truncation = append && format != "json" ? O_APPEND : (special || truncatesLater ? 0 : O_TRUNC)
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | truncation
        descriptor = open(target, flags, 0o644)
        guard descriptor >= 0 else {
            throw context.error("cannot open '\(target)' for writing: \(String(cString: strerror(errno)))")
        }
        var opened = stat()
        let size = fstat(descriptor, &opened) == 0 ? Int(opened.st_size) : 0
        inode = opened.st_ino != 0 ? Int(opened.st_ino) : nil  // nil when fstat failed (left zero)
        wroteHeader = append && size > 0
        // A regular file's pages go to the disk while the run goes on, so the fsync that ends it
        // (or a checkpoint's) has little left to wait for.
        let regular = (opened.st_mode & S_IFMT) == S_IFREG
        writer = LineWriter(
            descriptor: descriptor, startOffset: append ? size : 0, startsWriteBack: regular,
            truncates: truncatesLater && regular)
        if let meter = context.meter {
            writer.onWrite = { bytes in
                meter.count("sink_bytes_total", by: bytes)
                meter.count("sink_writes_total")
            }
        }
        if format == "json" { writer.writeRaw("[") }
        if format != "json" && !special {
            if let pending = restored?["pending"]?.stringValue { writer.restoreBuffered(Array(pending.utf8)) }
            context.keepState { [unowned self] in try self.commit() }
        }
    }

    /// For a checkpoint: writes out and syncs every line received, and returns `{length, pending}`:
    /// the file's synced length and nothing pending (earlier versions held back part of a page
    /// there; a resumed run still buffers what such a checkpoint kept).
    private func commit() throws -> Value {
        // Closed (the run ended): close wrote out and synced everything.
        if !closed {
            writer.flush()
            try check()
            if fsync(descriptor) != 0 { throw failure(WriteError(code: errno), "syncing") }
        }
        var state = JSONObject()
        state["length"] = .int(writer.writtenOffset)
        state["pending"] = .string(closed ? "" : String(decoding: writer.buffered, as: UTF8.self))
        // What a resumed run checks the file by before it cuts it back (see `checkUnchanged`).
        if let inode { state["inode"] = .int(inode) }
        if let tail = Self.tailDigest(path, before: writer.writtenOffset) { state["tail"] = .string(tail) }
        return .object(state)
    }

    /// A digest (FNV-1a, 64 bits) of the last 4 KB of `path` before `length`; nil if unreadable.
    static func tailDigest(_ path: String, before length: Int) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        let count = min(4_096, length)
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(length - count)) }
        guard read == count else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }

    /// Refuses to resume into an output that is not what the checkpoint left: shorter than it
    /// (cutting back would grow it with zero bytes), another file under its name, or one whose
    /// last bytes before the checkpoint's length changed. It is left as it is.
    static func checkUnchanged(_ path: String, since saved: Value, committed: Int, context: ComponentContext) throws {
        let advice = "restore it, or start over by resetting the pipeline's state (rivulet state STORE --reset NAME)"
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT && committed == 0 { return }
            throw context.error(
                "the output '\(path)' is gone, though the checkpoint wrote \(committed) bytes to it: \(advice)")
        }
        if Int(status.st_size) < committed {
            throw context.error(
                "the output '\(path)' has \(status.st_size) bytes, fewer than the \(committed) the checkpoint wrote: it "
                    + "was changed since; \(advice)")
        }
        if let inode = saved["inode"]?.intValue, inode != Int(status.st_ino) {
            throw context.error(
                "the output '\(path)' is not the file the checkpoint wrote (another file has its name): \(advice)")
        }
        if let tail = saved["tail"]?.stringValue, tailDigest(path, before: committed) != tail {
            throw context.error(
                "the output '\(path)' was changed since the checkpoint (its last bytes before byte \(committed) differ): "
                    + advice)
        }
    }

    /// Cuts a partial last line off `path` — what a run killed with SIGKILL in the middle of a write
    /// can leave — so that lines added after it are whole and start on their own line. The text cut
    /// is shown in a warning: a file whose author left out its final newline loses nothing unseen.
    static func cutPartialLastLine(of path: String, context: ComponentContext) throws {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return }  // not there yet: opening it to write says why, if anything
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return }
        let size = Int(status.st_size)
        var end = size
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var lineEnd: Int?
        while end > 0 && lineEnd == nil {
            let count = min(chunk.count, end)
            let read = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(end - count)) }
            guard read == count else {
                throw context.error("cannot read '\(path)' to add to it: \(String(cString: strerror(errno)))")
            }
            if end == size && chunk[count - 1] == 0x0A { return }
            if let last = chunk[0..<count].lastIndex(of: 0x0A) { lineEnd = end - count + last + 1 }
            end -= count
        }
        let keep = lineEnd ?? 0
        var cut = [UInt8](repeating: 0, count: min(size - keep, 200))
        let shown = cut.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(keep)) }
        if ftruncate(descriptor, off_t(keep)) != 0 {
            throw context.error("cannot cut the partial last line of '\(path)': \(String(cString: strerror(errno)))")
        }
        cut.removeLast(cut.count - max(shown, 0))
        let more = size - keep > cut.count ? "…" : ""
        context.log(
            "'\(path)' ended in a partial line (\(size - keep) bytes, as a run killed while writing leaves it); "
                + "it was cut before adding to the file: \(String(decoding: cut, as: UTF8.self).debugDescription)\(more)",
            level: .warning)
    }

    /// Removes `PATH.tmp-PID` files that runs killed before their rename left behind (their
    /// process is gone); a live run's is kept.
    static func removeLeftovers(of path: String) {
        let folder = LocalFiles.directory(of: path)
        let prefix = String(path.split(separator: "/").last ?? "") + ".tmp-"
        for (name, _) in directoryEntries(of: folder) {
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count)) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(folder + "/" + name) }
        }
    }

    /// The error for a failed write: the file and what went wrong.
    private func failure(_ error: WriteError, _ doing: String) -> PipelineRuntimeError {
        context.error("\(doing) '\(temporaryPath ?? path)': \(error)")
    }

    private func check() throws {
        do { try writer.check() } catch { throw failure(error, "writing") }
    }

    func receive(_ event: Event<Value>) throws {
        if closed { return }
        // Borrowed from the event by a switch: a `guard case` binding outlives the statement, so
        // it is a copy, a reference count taken and given back (for a partition's result, on a
        // line of memory the partition's thread wrote: a stall each).
        switch event {
        case .next(let value): try write(value)
        case .error, .completed: return
        }
    }

    /// Writes one element.
    private func write(_ value: Value) throws {
        try check()
        switch format {
        case .json:
            bytes.removeAll(keepingCapacity: true)
            if count > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(0x0A)
            JSONSerializer.write(value, to: &bytes)
            writer.writeRaw(String(decoding: bytes, as: UTF8.self))
        case .csv:
            if columns.isEmpty { columns = value.objectValue?.keys ?? ["value"] }
            if !wroteHeader {
                writer.writeLine(columns.map(Self.csvField).joined(separator: ","))
                wroteHeader = true
            }
            let fields = columns.map { column -> String in
                let field = value.objectValue.map { $0[column] ?? .null } ?? (column == "value" ? value : .null)
                switch field {
                case .null: return ""
                case .string(let text): return Self.csvField(text)
                default: return Self.csvField(field.description)
                }
            }
            writer.writeLine(fields.joined(separator: ","))
        case .jsonLines:
            writer.writeLine { JSONSerializer.write(value, to: &$0) }
        }
        count += 1
        if format != .json { scheduleFlush() }
    }

    /// Writes the buffered lines out `flushAfter` from now, unless a flush is already due.
    private func scheduleFlush() {
        guard flushesOnATimer, flushTimer.pending == nil else { return }
        // With no origin: a message is acknowledged once its line is flushed for it (SinkOrigins),
        // not held until this timer fires.
        flushTimer.pending = Origin.with(nil) {
            scheduler.schedule(after: flushAfter) { [writer, flushTimer] in
                flushTimer.pending = nil
                guard !flushTimer.cancelled else { return }
                writer.flush()
            }
        }
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacing("\"", with: "\"\"") + "\""
    }

    /// Writes out every whole line received (before a durable source's message is acknowledged).
    func flush() throws {
        guard !closed, format != .json else { return }
        writer.flush()
        try check()
    }

    func close() throws {
        guard !closed else { return }
        closed = true
        flushTimer.cancelled = true
        flushTimer.pending?.dispose()
        flushTimer.pending = nil
        if format == .json { writer.writeRaw(count > 0 ? "\n]\n" : "]\n") }
        writer.flush()
        writer.waitForTruncation()
        var problem: PipelineRuntimeError?
        do { try check() } catch { problem = error as? PipelineRuntimeError }
        // /dev/full and the like accept no fsync; a write error was reported already.
        if fsync(descriptor) != 0 && errno != EINVAL && problem == nil {
            problem = failure(WriteError(code: errno), "writing")
        }
        if Glibc.close(descriptor) != 0 && problem == nil { problem = failure(WriteError(code: errno), "closing") }
        if let temporaryPath {
            if problem != nil {
                unlink(temporaryPath)  // the target keeps its old content rather than half a new one
            } else if rename(temporaryPath, path) != 0 {
                problem = context.error("renaming '\(temporaryPath)' to '\(path)': \(WriteError(code: errno))")
            }
        }
        if let problem { throw problem }
    }
}
