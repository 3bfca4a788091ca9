@_spi(Components) import Pipeline
@_spi(Components) import Reactive

#if canImport(Glibc)
    import Glibc
#endif

private enum LineFormat: String, ParameterChoice {
    case auto, jsonl, text, csv
}
private enum StartPoint: String, ParameterChoice {
    case beginning, end
}
private enum Key {
    static let path = Parameter<String>(
        "path", doc: "The file, or a glob of files (read in name order), relative to the pipeline file.",
        example: "logs/*.jsonl")
    static let format = Parameter<LineFormat>(
        "format", default: .auto,
        doc:
            "jsonl: each line a JSON value; text: each line a string; csv: each line a CSV record; auto: jsonl for .jsonl, .ndjson and .json, csv for .csv, else text."
    )
    static let follow = Parameter<Bool>(
        "follow", default: false,
        doc:
            "Keep reading as lines are added, like tail -F: a rotated file is finished, then the new one read; a truncated one is read again from its start."
    )
    static let from = Parameter<StartPoint>(
        "from", default: .beginning,
        doc: "Where to start in files that exist when the run starts (new files start at the beginning).")
    static let header = CSVParameters.header
    static let numbers = CSVParameters.numbers
    static let separator = CSVParameters.separator
    static let poll = Parameter<RxTimeInterval>(
        "poll", default: .milliseconds(250), doc: "With follow: how often the files are checked for new lines."
    ).above(RxTimeInterval.zero)
}

extension BuiltinComponents {
    /// `file: PATH` (a source) — the lines of files, optionally followed as they grow.
    public static let fileSource = ComponentSpec(
        name: "file",
        summary: "Emits the lines of files (JSON Lines, or text as strings); with follow, as they are written.",
        docs: """
            Lines are read a buffer at a time, never the whole file. Without follow, the files are read \
            to their end and the source completes; a last line without a newline is emitted. Reading \
            starts at the turn after the pipeline is subscribed, once every operator after the source \
            is (a sample's ticks are armed first, as for lines from standard input). With follow \
            it never completes: new lines are emitted as they are written, a last line is held until its \
            newline arrives, a file replaced under its name (rotated) is read to its end before the new \
            one is opened, a file cut shorter (truncated) is read again from its start, and files that \
            come to match the glob are read from their beginning. A malformed JSON line fails the \
            pipeline, naming the file and line (or, with onError, is skipped or reported). \
            With format: csv each line is a record (RFC 4180 quoting: a field in double quotes may \
            hold the separator, and "" is a quote; a record is one line, as Vector's csv codec reads \
            newline-framed input): with header (the default) each file's first line names the \
            fields and every later line is an object of them; without, a list; numbers: true reads \
            a field written as a number as one. A line with another number of fields than the \
            header, or with a stray quote, is an element error naming the file and line. \
            Under --state each file's inode and offset are \
            checkpointed; a file rotated while the pipeline was down is found again by its inode in its \
            folder and finished first. A run without a checkpoint starts from the file under the name \
            now: files rotated away before the first checkpoint are not looked for.
            """,
        parameters: [Key.path, Key.format, Key.follow, Key.from, Key.poll, Key.header, Key.numbers, Key.separator],
        primary: Key.path,
        example: "source: { file: { path: logs/app.jsonl, follow: true } }",
        validate: { values, validation in
            CSVParameters.check(values, validation)
            let written = values[Key.path]
            let resolved = validation.resolvePath(written)
            if FileLines.isGlob(resolved) || values[Key.follow] {
                let folder = LocalFiles.directory(of: resolved)
                if access(folder, R_OK) != 0 {
                    validation.error(
                        "cannot read the folder '\(folder)' of '\(written)'", at: Key.path, in: values,
                        note: "looked for \(resolved)")
                }
            } else if access(resolved, R_OK) != 0 {
                validation.error(
                    "cannot read the file '\(written)'", at: Key.path, in: values,
                    note: "looked for \(resolved); with follow: true a file that does not exist yet is waited for")
            }
        },
        checkpointing: .keepsState("each file's inode and offset (exactly-once with a file sink)"),
        delivery: Delivery(
            .exactlyOnce,
            "into a file sink with --state (its offsets and the sink's length are kept in the same checkpoint); at-least-once into other sinks; without --state a new run reads from the start"
        ),
        elementErrors: true,
        factory: .source { parameters, context in
            let pattern = context.resolvePath(parameters[Key.path])
            var json: Bool
            var csv: CSVRecords?
            switch parameters[Key.format] {
            case .jsonl: json = true
            case .text: json = false
            case .csv:
                json = false
                csv = CSVParameters.records(parameters)
            case .auto:
                json = [".jsonl", ".ndjson", ".json"].contains { pattern.hasSuffix($0) }
                if pattern.hasSuffix(".csv") { csv = CSVParameters.records(parameters) }
            }
            let follow = parameters[Key.follow]
            let fromEnd = parameters[Key.from] == .end
            let poll = parameters[Key.poll]
            func observable(_ workers: ParallelStretch?) -> Observable<Value> {
                let reading = Observable<Value> { observer, lifetime in
                    let lines = FileLines(
                        pattern: pattern, json: json, follow: follow, fromEnd: fromEnd, context: context,
                        restored: context.restoredState, progress: follow ? nil : context.meter?.progress)
                    lines.csv = csv
                    lines.workers = workers.map(ParallelLines.Workers.init)
                    context.keepState { lines.state }
                    let isLive = { !lifetime.isDisposed && !context.scheduler.isInterrupted }
                    guard follow else {
                        let failure = lines.readAvailable(isLive: isLive, lifetime: lifetime, to: observer)
                        if let failure { observer.on(.error(failure)) } else if isLive() { observer.on(.completed) }
                        return
                    }
                    lifetime.add(
                        context.scheduler.schedulePeriodic(startAfter: .zero, period: poll) {
                            guard !lifetime.isDisposed else { return }
                            if let failure = lines.readAvailable(isLive: isLive, lifetime: lifetime, to: observer) {
                                observer.on(.error(failure))
                                lifetime.dispose()
                            }
                        })
                }
                // Read to its end at the next turn, once every operator after it is subscribed.
                return follow ? reading : reading.subscribedAtNextTurn(on: context.scheduler)
            }
            // `parallel:`: JSON Lines read to their end run the stretch after the source on
            // several threads; followed, or keeping checkpoints (whose offsets follow each
            // element), they are read an element at a time and run it here.
            return PipelineSource(
                { _ in observable(nil) },
                parallel: { _, stretch in
                    // Chosen at subscription (checkpoints are known then), and subscribed with the
                    // observer itself: `deferred` would put a forwarding step on every element.
                    Observable { observer, lifetime in
                        let lines =
                            json && !follow && context.checkpoints == nil
                            ? observable(stretch) : stretch.serially(observable(nil))
                        lines.subscribe(observer, in: lifetime)
                    }
                })
        })
}

/// The files a `file` source reads, each followed by path: the reader of its current file (an
/// older one, after a rotation, until it is finished), the file's inode, and where it is.
final class FileLines {
    private final class Tracked {
        let path: String
        var reader: LineReader?
        var inode: UInt64 = 0
        var done = false
        /// With CSV and a header: the header's field names, and the reader they were read for (a
        /// file that replaces it under its name has a header of its own).
        var header: [String]?
        var headerReader: LineReader?

        init(path: String) {
            self.path = path
        }
    }

    private let pattern: String
    private let json: Bool
    private let follow: Bool
    // Unowned: the run's checkpoints keep this object (for its state) and the context keeps the
    // checkpoints; the context outlives every read, which happens while the pipeline runs.
    private unowned let context: ComponentContext
    private var tracked: [Tracked] = []
    private var firstScan = true
    private let fromEnd: Bool
    /// Bytes read of every file (for a watched run's progress line), and of the files finished.
    private let progress: InputProgress?
    private var finishedBytes = 0
    /// Set (`parallel:`) when the operators after the source run on the lines as they are read.
    var workers: ParallelLines.Workers?
    /// Set when the lines are CSV records.
    var csv: CSVRecords?

    init(
        pattern: String, json: Bool, follow: Bool, fromEnd: Bool, context: ComponentContext, restored: Value?,
        progress: InputProgress? = nil
    ) {
        self.progress = progress
        self.pattern = pattern
        self.json = json
        self.follow = follow
        self.fromEnd = fromEnd
        self.context = context
        for saved in restored?["files"]?.arrayValue ?? [] {
            guard let path = saved["path"]?.stringValue else { continue }
            // A file read to its end is read on from there: it may have grown since (--resume).
            let file = Tracked(path: path)
            let inode = UInt64(saved["inode"]?.intValue ?? 0)
            let offset = saved["offset"]?.intValue ?? 0
            let line = saved["line"]?.intValue ?? 0
            // The same file, or the file rotated away from the path while the run was down.
            if let current = Self.inode(of: path), current == inode {
                file.reader = open(path, offset: offset, line: line)
            } else if let rotated = Self.file(withInode: inode, near: path) {
                file.reader = open(rotated, offset: offset, line: line)
            }
            if file.reader != nil { file.inode = inode }
            if let names = saved["header"]?.arrayValue {
                file.header = names.compactMap(\.stringValue)
                file.headerReader = file.reader
            }
            tracked.append(file)
        }
        if !tracked.isEmpty { firstScan = false }
    }

    /// What a checkpoint keeps: every file's path, inode, offset and line number.
    var state: Value {
        let files = tracked.map { file -> Value in
            var entry = JSONObject()
            entry["path"] = .string(file.path)
            entry["inode"] = .int(Int(file.inode))
            entry["offset"] = .int(file.reader?.offset ?? 0)
            entry["line"] = .int(file.reader?.lineNumber ?? 0)
            if let header = file.header, file.headerReader === file.reader {
                entry["header"] = .array(header.map(Value.string))
            }
            return .object(entry)
        }
        return ["files": .array(files)]
    }

    static func isGlob(_ path: String) -> Bool {
        path.contains { $0 == "*" || $0 == "?" || $0 == "[" }
    }

    private func open(_ path: String, offset: Int, line: Int) -> LineReader? {
        guard let reader = LineReader(path: path, offset: offset, lineNumber: line) else { return nil }
        reader.holdsPartialLine = follow
        return reader
    }

    static func size(of path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }

    static func inode(of path: String) -> UInt64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return UInt64(status.st_ino)
    }

    /// The file in `path`'s folder with inode `inode` (where a rotation renamed it), if any.
    static func file(withInode inode: UInt64, near path: String) -> String? {
        guard inode != 0 else { return nil }
        let folder = LocalFiles.directory(of: path)
        return directoryEntries(of: folder).first { $0.inode == inode }.map { folder + "/" + $0.name }
    }

    /// The oldest file rotated away from `path` after `finished` was (a file in its folder whose
    /// name begins with its name, not the file at `path` now, last written no earlier than
    /// `finished`), with its inode.
    static func rotatedSuccessor(of path: String, after finished: stat) -> (String, UInt64)? {
        let folder = LocalFiles.directory(of: path)
        let base = String(path.split(separator: "/").last ?? "")
        let currentInode = inode(of: path)
        var best: (path: String, inode: UInt64, time: timespec)?
        for (name, _) in directoryEntries(of: folder) {
            guard name.hasPrefix(base), name != base else { continue }
            var status = stat()
            let candidate = folder + "/" + name
            guard stat(candidate, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            let inode = UInt64(status.st_ino)
            guard inode != UInt64(finished.st_ino), inode != currentInode else { continue }
            let time = status.st_mtim
            guard !Self.earlier(time, than: finished.st_mtim) else { continue }
            if let current = best, !Self.earlier(time, than: current.time) { continue }
            best = (candidate, inode, time)
        }
        return best.map { ($0.path, $0.inode) }
    }

    private static func earlier(_ a: timespec, than b: timespec) -> Bool {
        (a.tv_sec, a.tv_nsec) < (b.tv_sec, b.tv_nsec)
    }

    /// The paths the pattern names now, in name order.
    private func matchingPaths() -> [String] {
        guard Self.isGlob(pattern) else { return access(pattern, F_OK) == 0 ? [pattern] : [] }
        var matches = glob_t()
        defer { globfree(&matches) }
        guard glob(pattern, 0, nil, &matches) == 0 else { return [] }
        return (0..<Int(matches.gl_pathc)).compactMap { index in
            matches.gl_pathv[index].map { String(cString: $0) }
        }.sorted()
    }

    /// Emits every whole line that can be read now, file by file; returns the error that ends the
    /// source (a malformed JSON line, a read error), if one does.
    func readAvailable(
        isLive: () -> Bool, lifetime: Lifetime, to observer: AnyObserver<Value>
    ) -> PipelineRuntimeError? {
        for path in matchingPaths() where !tracked.contains(where: { $0.path == path }) {
            tracked.append(Tracked(path: path))
        }
        let startAtEnd = firstScan && fromEnd
        if firstScan, let progress {
            progress.start(total: tracked.reduce(0) { total, file in total + Self.size(of: file.path) })
        }
        firstScan = false
        for file in tracked where !file.done {
            if file.reader == nil {
                guard let reader = open(file.path, offset: 0, line: 0) else { continue }
                var status = stat()
                fstat(reader.descriptor, &status)
                file.inode = UInt64(status.st_ino)
                file.reader = reader
                if startAtEnd { file.reader = open(file.path, offset: Int(status.st_size), line: 0) }
            }
            let reading =
                if let workers, !follow, let reader = file.reader {
                    readInParallel(file, reader, workers: workers, isLive: isLive, lifetime: lifetime, to: observer)
                } else {
                    readLines(of: file, isLive: isLive, to: observer)
                }
            switch reading {
            case .caughtUp: continue
            case .stopped: return nil
            case .failed(let error): return error
            }
        }
        return nil
    }

    /// How reading one file ended.
    private enum FileReading {
        /// At the end of what it holds now (or of the file, when not following).
        case caughtUp
        /// The run stopped reading.
        case stopped
        case failed(PipelineRuntimeError)
    }

    /// A whole file not followed, its lines parsed by `workers` threads.
    private func readInParallel(
        _ file: Tracked, _ reader: LineReader, workers: ParallelLines.Workers, isLive: () -> Bool,
        lifetime: Lifetime, to observer: AnyObserver<Value>
    ) -> FileReading {
        let context = context
        let ending = ParallelLines.read(
            reader, workers: workers, to: observer, lifetime: lifetime, isLive: isLive,
            advanced: { [finishedBytes, progress] offset in progress?.advance(to: finishedBytes + offset) },
            context: context, what: "\(file.path)",
            failure: { error in context.error("\(file.path) line \(reader.lineNumber): \(error)") })
        switch ending {
        case .failed(let error):
            return .failed(error as? PipelineRuntimeError ?? context.error("\(error)"))
        case .stopped: return .stopped
        case .exhausted:
            finishedBytes += reader.offset
            file.done = true
            return .caughtUp
        }
    }

    /// The file's lines one by one, up to its end; when following, on into the file that took its
    /// name (rotated) or from its start (truncated).
    private func readLines(of file: Tracked, isLive: () -> Bool, to observer: AnyObserver<Value>) -> FileReading {
        let checkpoints = context.checkpoints
        while let reader = file.reader {
            do {
                while isLive(), let value = try next(reader, file: file) {
                    progress?.advance(to: finishedBytes + reader.offset)
                    let event = Event.next(consume value)
                    observer.on(event)
                    checkpoints?.checkpointIfDue()
                    if case .next(let value) = consume event { reader.giveBack(consume value) }
                }
            } catch let error as PipelineRuntimeError {
                return .failed(error)
            } catch {
                return .failed(context.error("\(file.path) line \(reader.lineNumber): \(error)"))
            }
            guard isLive() else { return .stopped }
            guard follow else {
                finishedBytes += reader.offset
                file.done = true
                return .caughtUp
            }
            guard movedOn(file, from: reader) else { return .caughtUp }
        }
        return .caughtUp
    }

    /// At the end of what is there: a rotation, a truncation, or nothing new. Whether `file` now
    /// has more to read (its reader moved on to it).
    private func movedOn(_ file: Tracked, from reader: LineReader) -> Bool {
        let current = Self.inode(of: file.path)
        if current != file.inode {
            if reader.holdsPartialLine {
                // The old file is finished: its last line, even without a newline, is emitted.
                reader.holdsPartialLine = false
                return true
            }
            // Rotated more than once since it was opened: the files rotated after it come first.
            var finished = stat()
            fstat(reader.descriptor, &finished)
            if let (successor, inode) = Self.rotatedSuccessor(of: file.path, after: finished),
                let next = open(successor, offset: 0, line: 0)
            {
                next.holdsPartialLine = false
                file.inode = inode
                file.reader = next
                return true
            }
            // The file now under the name, once there is one. Until then the finished one stays,
            // at its end, so that a checkpoint keeps it and not its start.
            guard let next = open(file.path, offset: 0, line: 0) else { return false }
            var opened = stat()
            fstat(next.descriptor, &opened)
            file.inode = UInt64(opened.st_ino)
            file.reader = next
            return true
        }
        var status = stat()
        if fstat(reader.descriptor, &status) == 0 && Int(status.st_size) < reader.offset {
            file.reader = open(file.path, offset: 0, line: 0)
            return true
        }
        return false
    }

    /// The next line's value; a malformed line is handled as `onError` says (skipped, or
    /// thrown as an error naming the file and line).
    private func next(_ reader: LineReader, file: Tracked) throws -> Value? {
        let path = file.path
        if let csv { return try nextRecord(reader, file: file, csv: csv) }
        guard json else {
            return try reader.nextLine { .string(String(decoding: $0, as: UTF8.self)) }
        }
        while true {
            do {
                return try reader.nextJSONValue()
            } catch let malformed as LineReader.MalformedLine {
                try context.elementFailed(
                    context.error("\(path) line \(malformed.line): \(malformed.error)"),
                    element: .string(malformed.text))
            }
        }
    }

    /// A line that is not a record: why, and its text.
    private struct MalformedRecord: Error {
        let reason: CSVRecords.Malformed
        let text: String
    }

    /// The next CSV record's value, its file's header read first (from the file's start when the
    /// reader starts past it: `from: end`).
    private func nextRecord(_ reader: LineReader, file: Tracked, csv: CSVRecords) throws -> Value? {
        while true {
            if csv.header && (file.header == nil || file.headerReader !== reader) {
                if reader.offset == 0 {
                    do {
                        guard let names = try reader.nextLine({ line in try csv.fields(line) }) else { return nil }
                        file.header = names
                        file.headerReader = reader
                        continue
                    } catch let malformed as CSVRecords.Malformed {
                        throw context.error("\(file.path) line 1, the header: \(malformed)")
                    }
                }
                let start = LineReader(path: file.path, offset: 0, lineNumber: 0)
                file.header = try start.flatMap { try $0.nextLine { line in try? csv.fields(line) } } ?? nil
                file.headerReader = reader
                if file.header == nil { throw context.error("\(file.path): cannot read its header line") }
            }
            let names = csv.header ? file.header : nil
            do {
                return try reader.nextLine { line -> Value in
                    do throws(CSVRecords.Malformed) {
                        return try csv.value(try csv.fields(line), names: names)
                    } catch {
                        throw MalformedRecord(reason: error, text: String(decoding: line, as: UTF8.self))
                    }
                }
            } catch let malformed as MalformedRecord {
                try context.elementFailed(
                    context.error("\(file.path) line \(reader.lineNumber): \(malformed.reason)"),
                    element: .string(malformed.text))
            }
        }
    }
}
