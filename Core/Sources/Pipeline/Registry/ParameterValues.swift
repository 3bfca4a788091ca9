import Reactive

/// A component's parameters after checking: typed, with defaults filled in.
public struct ParameterValues {
    /// One checked parameter value.
    public indirect enum Entry {
        /// A string, an enum word or a stream name.
        case string(String)
        /// A template.
        case template(Template)
        /// An expression (also a mapping of expressions, compiled into one).
        case expression(Expression)
        /// An integer.
        case int(Int)
        /// A number.
        case number(Double)
        /// A bool.
        case bool(Bool)
        /// A duration.
        case duration(RxTimeInterval)
        /// A value as written.
        case value(Value)
        /// A list.
        case list([Entry])
        /// A mapping with free keys.
        case map([(String, Entry)])
        /// A nested group of parameters.
        case object(ParameterValues)
        /// An inner source.
        case source(InnerSource)
    }

    /// An inner source, checked: which source and its parameters.
    public struct InnerSource {
        /// The source's spec.
        public let spec: ComponentSpec
        /// Its checked parameters.
        public let parameters: ParameterValues
        /// Where it is in the file.
        public let location: SourceLocation
    }

    /// The checked values by parameter name (given or defaulted).
    public var entries: [String: Entry]
    /// The names the file gave explicitly.
    public var given: Set<String>
    /// Where each given value is in the file.
    public var locations: [String: SourceLocation]

    /// Values from checked entries.
    public init(entries: [String: Entry] = [:], given: Set<String> = [], locations: [String: SourceLocation] = [:]) {
        self.entries = entries
        self.given = given
        self.locations = locations
    }
}
