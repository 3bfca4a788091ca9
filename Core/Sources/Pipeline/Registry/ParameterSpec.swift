/// The type of a component parameter, which decides how its YAML is checked and converted.
public indirect enum ParameterType: Sendable, CustomStringConvertible {
    /// Text, taken as written.
    case string
    /// Text with `{{ expr }}` parts, evaluated against the element that triggers the component.
    case template
    /// An expression over the element, such as `len(.) >= 3`.
    case expression
    /// An expression, or a mapping or list whose leaves are expressions (`map: {title: .x}`).
    case valueExpression
    /// A whole number.
    case int
    /// A number.
    case number
    /// `true` or `false`.
    case bool
    /// A duration: `250ms`, `1.5s`, `2m`, `1h`.
    case duration
    /// One of the listed words.
    case oneOf([String])
    /// A list of values of one type (a single value is accepted as a list of one).
    case list(ParameterType)
    /// Any JSON-like value, taken as written.
    case value
    /// The name of a stream of the pipeline.
    case stream
    /// An inner source: a mapping with one source component, run for each element.
    case source
    /// A chain of operators, written as a stream's `ops` (the sub-chain `groupBy` runs per group).
    case operators
    /// A mapping with free keys, each value of one type (query parameters, headers).
    case map(ParameterType)
    /// A mapping with its own named parameters.
    case object([ParameterSpec])

    /// A short name for messages and docs.
    public var description: String {
        switch self {
        case .string: return "string"
        case .template: return "template"
        case .expression: return "expression"
        case .valueExpression: return "expression or mapping of expressions"
        case .int: return "integer"
        case .number: return "number"
        case .bool: return "bool"
        case .duration: return "duration"
        case .oneOf(let words): return words.joined(separator: " | ")
        case .list(let element): return "list of \(element)"
        case .value: return "value"
        case .stream: return "stream name"
        case .source: return "source"
        case .operators: return "list of operators"
        case .map(let element): return "mapping of \(element)"
        case .object: return "mapping"
        }
    }
}

/// One parameter of a component: its name, type, whether it is required or its default, its docs.
public struct ParameterSpec: Sendable {
    /// The key in the YAML.
    public var name: String
    /// How its value is checked and converted.
    public var type: ParameterType
    /// Whether it must be given.
    public var required: Bool
    /// The value used when it is not given, as YAML text would give it.
    public var defaultValue: Value?
    /// One or two sentences for `rivulet components` and the docs.
    public var doc: String
    /// An example value, as YAML.
    public var example: String?
    /// A bound the value must keep (`at least 0`), checked by the validator at the value: it
    /// returns the problem, or nil.
    var bound: (@Sendable (Any) -> String?)?
    /// For a stream parameter: whether only its latest element is read, so that its elements never
    /// make the component emit (`withLatestFrom`'s stream). A loop of streams may close only
    /// through such a read.
    public internal(set) var isSampled = false

    /// A parameter; components declare theirs with `Parameter`, which makes this.
    init(
        _ name: String, _ type: ParameterType, required: Bool = false, default defaultValue: Value? = nil,
        doc: String, example: String? = nil
    ) {
        self.name = name
        self.type = type
        self.required = required
        self.defaultValue = defaultValue
        self.doc = doc
        self.example = example
    }
}
