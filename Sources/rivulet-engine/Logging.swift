import ArgumentParser
import Components
import Foundation
import Logging
@_spi(Host) @_spi(Components) import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

/// How the log on standard error is written: `text` for people, `json` for collectors.
enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// `--log-level`'s values (Rivulet's `LogLevel`, as the command line names them).
enum LogLevelOption: String, ExpressibleByArgument, CaseIterable {
    case trace, debug, info, warning, error

    var level: LogLevel { LogLevel(name: rawValue) ?? .info }
}

/// Everything Rivulet writes about itself on standard error — diagnostics, components' lines,
/// the run's summary — goes through one swift-log `Logger`, so `--log-level` filters it and
/// `--log-format json` makes every line one JSON object.
enum RunLog {
    /// The settings of this process, fixed by `configure` before anything is logged.
    nonisolated(unsafe) private(set) static var level = LogLevel.info
    nonisolated(unsafe) private(set) static var format = LogFormat.text
    /// The pipeline's name, in every JSON line of a run.
    nonisolated(unsafe) static var pipeline: String?
    nonisolated(unsafe) private static var configured = false

    /// Sets the level and format (a command calls it once its options are parsed; the first call
    /// wins, as swift-log's bootstrap may be done once).
    static func configure(level: LogLevel, format: LogFormat) {
        guard !configured else { return }
        configured = true
        self.level = level
        self.format = format
        LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label) }
    }

    /// The logger, made after `configure` (or with the defaults when a command logs before it).
    static var logger: Logger {
        if !configured { configure(level: .info, format: .text) }
        return cachedLogger
    }
    private static let cachedLogger: Logger = {
        var logger = Logger(label: "rivulet")
        logger.logLevel = Logger.Level(level)
        return logger
    }()

    /// Whether lines of `level` are written.
    static func shows(_ level: LogLevel) -> Bool { level >= self.level }

    /// A line a component logged, with the component and its place in the file.
    static func write(_ record: LogRecord) {
        var metadata: Logger.Metadata = [:]
        if let component = record.component { metadata["component"] = .string(component) }
        if let location = record.location {
            metadata["file"] = .string(location.file)
            metadata["line"] = .stringConvertible(location.line)
            metadata["column"] = .stringConvertible(location.column)
        }
        logger.log(level: Logger.Level(record.level), "\(record.message)", metadata: metadata)
    }

    /// An informational line (`metrics: serving …`, the summary), with fields for the JSON log.
    static func info(_ message: String, fields: Logger.Metadata = [:]) {
        logger.info("\(message)", metadata: fields.isEmpty ? nil : fields)
    }

    /// A warning, written as it is given (`warning: …` or `file:line:col: warning: …`).
    static func warning(_ message: String) { logger.warning("\(message)") }

    /// An error, written as it is given: `error: …`, or an error's own text (which says where).
    static func error(_ message: String) { logger.error("\(message)") }

    /// Diagnostics of a pipeline or test file: rendered with their source lines as text, one
    /// JSON object each as JSON.
    static func report(_ diagnostics: [Diagnostic], source: String?) {
        guard !diagnostics.isEmpty else { return }
        switch format {
        case .text:
            let renderer = DiagnosticRenderer(useColor: CommandSupport.useColor)
            let shown = diagnostics.filter { shows($0.severity == .error ? .error : .warning) }
            guard !shown.isEmpty else { return }
            StandardErrorLogHandler.emit(renderer.render(shown, source: source))
        case .json:
            for diagnostic in diagnostics {
                var metadata: Logger.Metadata = [
                    "file": .string(diagnostic.location.file),
                    "line": .stringConvertible(diagnostic.location.line),
                    "column": .stringConvertible(diagnostic.location.column),
                ]
                if let note = diagnostic.note { metadata["note"] = .string(note) }
                logger.log(
                    level: diagnostic.severity == .error ? .error : .warning, "\(diagnostic.message)",
                    metadata: metadata
                )
            }
        }
    }
}

extension Logger.Level {
    /// Rivulet's level as swift-log's (`warning` is swift-log's `warning`; `notice` is not used).
    init(_ level: LogLevel) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .warning: self = .warning
        case .error: self = .error
        }
    }

    /// The name Rivulet gives the level (`notice` counts as `info`, `critical` as `error`).
    var rivuletName: String {
        switch self {
        case .trace: return "trace"
        case .debug: return "debug"
        case .info, .notice: return "info"
        case .warning: return "warning"
        case .error, .critical: return "error"
        }
    }
}

/// swift-log's handler for Rivulet: one line per message on standard error, written whole with
/// write(2). Text is the message as it is (error messages keep their exact wording); JSON is one
/// object per line with the time, level, message, pipeline, and the component and its place.
struct StandardErrorLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = Logger.Level(RunLog.level)

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let text = event.message.description
        switch RunLog.format {
        case .text:
            Self.emit(text.hasSuffix("\n") ? text : text + "\n")
        case .json:
            var merged = metadata
            if let extra = event.metadata { merged.merge(extra) { $1 } }
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                Self.emit(Self.json(level: event.level, message: String(line), metadata: merged))
            }
        }
    }

    /// One JSON line. A message that starts with its own `file:line:col: error: ` (a run-time
    /// error's text) or `error: ` gives those parts as fields instead.
    static func json(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var object = JSONObject()
        object["time"] = .string(timestamp())
        object["level"] = .string(level.rivuletName)
        var message = message
        var located: (file: String, line: Int, column: Int)?
        if let parsed = splitLocation(message) {
            located = (parsed.file, parsed.line, parsed.column)
            message = parsed.rest
        }
        for prefix in ["error: ", "warning: "] where message.hasPrefix(prefix) {
            message.removeFirst(prefix.count)
        }
        object["message"] = .string(message)
        if let pipeline = RunLog.pipeline { object["pipeline"] = .string(pipeline) }
        let first = ["component", "file", "line", "column"]
        for key in first + metadata.keys.filter({ !first.contains($0) }).sorted() {
            guard let value = metadata[key] else { continue }
            switch value {
            case .stringConvertible(let number as Int): object[key] = .int(number)
            case .stringConvertible(let number as Double): object[key] = .double(number)
            default: object[key] = .string(value.description)
            }
        }
        if let located {
            object["file"] = .string(located.file)
            object["line"] = .int(located.line)
            object["column"] = .int(located.column)
        }
        return ReportFormat.text(.object(object))
    }

    /// `file:line:col: ` at the start of `message`, and what follows it.
    static func splitLocation(_ message: String) -> (file: String, line: Int, column: Int, rest: String)? {
        let parts = message.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let line = Int(parts[1]), let column = Int(parts[2]), parts[3].hasPrefix(" "),
            !parts[0].isEmpty, !parts[0].contains(" ")
        else { return nil }
        return (String(parts[0]), line, column, String(parts[3].dropFirst()))
    }

    /// The time now in UTC, ISO 8601 with milliseconds (log lines are stamped on the wall clock).
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), now.tv_nsec / 1_000_000)
    }

    /// Writes `text` to standard error whole (secrets redacted).
    /// Writes `text` to standard error, clearing the progress line first if one is drawn.
    static func emit(_ text: String) {
        TerminalStatusLine.shared.writing { FileHandleOutput.standardError.write(text) }
    }
}

/// `--log-level` and `--log-format`, on every command.
struct LogOptions: ParsableArguments {
    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "What standard error shows: trace, debug, info (the default), warning or error. RIVULET_LOG_LEVEL sets it too.",
            valueName: "level"))
    var level: LogLevelOption?

    @Option(
        name: .customLong("log-format"),
        help: "text (the default), or json: everything written on standard error as one JSON object a line.")
    var format: LogFormat = .text

    /// Applies the options: the flag, else `RIVULET_LOG_LEVEL`, else `info`.
    func apply() throws {
        var chosen = level?.level ?? .info
        if level == nil, let text = getenv("RIVULET_LOG_LEVEL").map({ String(cString: $0) }), !text.isEmpty {
            guard let named = LogLevel(name: text) else {
                RunLog.configure(level: .info, format: format)
                RunLog.error("error: RIVULET_LOG_LEVEL must be trace, debug, info, warning or error; got '\(text)'")
                throw ExitCode(2)
            }
            chosen = named
        }
        RunLog.configure(level: chosen, format: format)
    }
}
