/// How much a line of a run's log matters; a run shows the lines at or above its log level.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case trace, debug, info, warning, error

    /// The level's name, as `--log-level` takes it and the JSON log writes it.
    @_spi(Components) public var name: String {
        switch self {
        case .trace: return "trace"
        case .debug: return "debug"
        case .info: return "info"
        case .warning: return "warning"
        case .error: return "error"
        }
    }

    /// The level named `name` (`trace` … `error`), if there is one.
    @_spi(Components) public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    /// Whether `lhs` matters less than `rhs`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One line of a run's log and the component that wrote it, for the host to print as it is told
/// (plain text, or JSON with the component's place in the file).
@_spi(Components) public struct LogRecord: Sendable {
    /// How much it matters.
    public var level: LogLevel
    /// The text, without a level prefix.
    public var message: String
    /// The component that wrote it (`debounce`), if a component did.
    public var component: String?
    /// Where that component is in the pipeline file.
    public var location: SourceLocation?

    /// A line of the run's log.
    public init(level: LogLevel, message: String, component: String? = nil, location: SourceLocation? = nil) {
        self.level = level
        self.message = message
        self.component = component
        self.location = location
    }
}
