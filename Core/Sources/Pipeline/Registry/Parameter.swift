import Reactive

/// A Swift type that a parameter's checked value is read as: `Int`, `String`, `RxTimeInterval`,
/// `Expression`, `Template`, `Value`, a list of them, or an enum of words (`ParameterChoice`).
public protocol ParameterConvertible {
    /// How a file writes the value: what the validator checks and makes, and the docs show.
    static var parameterType: ParameterType { get }
    /// The value from what the validator made of the file's text for `parameterType` (see
    /// `ParameterValues.values`); nil when that is of another type.
    init?(checked: Any)
    /// The value as a pipeline file would write it (defaults are shown this way).
    var writtenValue: Value { get }
}

extension ParameterConvertible {
    /// The checked value itself, when the validator made this type.
    public init?(checked: Any) {
        guard let value = checked as? Self else { return nil }
        self = value
    }
}

/// Anything that declares one parameter: the component spec's parameter list is made of these.
public protocol ParameterDeclaration: Sendable {
    /// The parameter's name, type, default, docs and example.
    var spec: ParameterSpec { get }
}

/// A typed key for one parameter, declared once with its name, type, default and docs, and used
/// to read the checked value: `values[dueTime]`. Required parameters and parameters with a
/// default read as `T`; optional ones are declared as `Parameter<T?>` and read as `T?`.
public struct Parameter<T>: ParameterDeclaration, @unchecked Sendable {
    /// The declaration the validator, `rivulet components` and the docs read.
    public private(set) var spec: ParameterSpec
    private let read: (Any?) -> T?

    /// The key in the YAML.
    public var name: String { spec.name }

    init(spec: ParameterSpec, read: @escaping (Any?) -> T?) {
        self.spec = spec
        self.read = read
    }

    func value(in values: ParameterValues) -> T {
        guard let value = read(values.values[spec.name]) else {
            // The validator rejects a file without a required parameter before a factory runs.
            fatalError("parameter '\(spec.name)' read before it was checked")
        }
        return value
    }
}

extension Parameter where T: ParameterConvertible {
    /// A required parameter.
    public init(_ name: String, doc: String, example: String? = nil) {
        self.init(spec: ParameterSpec(name, T.parameterType, required: true, doc: doc, example: example)) {
            $0.flatMap(T.init(checked:))
        }
    }

    /// A parameter with a default, used when the file does not give it.
    public init(_ name: String, default defaultValue: T, doc: String, example: String? = nil) {
        self.init(
            spec: ParameterSpec(name, T.parameterType, default: defaultValue.writtenValue, doc: doc, example: example)
        ) { $0.flatMap(T.init(checked:)) ?? defaultValue }
    }
}

extension Parameter {
    /// An optional parameter: nil when the file does not give it.
    public init<Wrapped: ParameterConvertible>(_ name: String, doc: String, example: String? = nil)
    where T == Wrapped? {
        self.init(spec: ParameterSpec(name, Wrapped.parameterType, doc: doc, example: example)) {
            .some($0.flatMap(Wrapped.init(checked:)))
        }
    }
}

extension Parameter where T == Expression {
    /// A required expression that may also be written as a mapping or list of expressions
    /// (`map: {title: .headline}`), compiled into one expression building the value.
    public static func valueExpression(_ name: String, doc: String, example: String? = nil) -> Self {
        Self(spec: ParameterSpec(name, .valueExpression, required: true, doc: doc, example: example)) {
            $0 as? Expression
        }
    }
}

extension Parameter where T == Expression? {
    /// An optional expression that may also be written as a mapping or list of expressions.
    public static func valueExpression(_ name: String, doc: String, example: String? = nil) -> Self {
        Self(spec: ParameterSpec(name, .valueExpression, doc: doc, example: example)) { .some($0 as? Expression) }
    }
}

extension Parameter where T == ParameterValues? {
    /// An optional mapping with its own named parameters (`retry: {max: 3}`).
    public static func object(
        _ name: String, _ parameters: [any ParameterDeclaration], doc: String, example: String? = nil
    ) -> Self {
        Self(spec: ParameterSpec(name, .object(parameters.map(\.spec)), doc: doc, example: example)) {
            .some($0 as? ParameterValues)
        }
    }
}

extension Parameter {
    /// This parameter, whose value must be at least `minimum` (`take: -1` is an error at the value).
    public func atLeast<V: Comparable & ParameterConvertible & Sendable>(_ minimum: V) -> Self {
        bounded(V.self) { $0 < minimum ? "at least \(minimum.writtenValue.text)" : nil }
    }

    /// This parameter, whose value must be more than `minimum` (`interval: 0ms` is an error).
    public func above<V: Comparable & ParameterConvertible & Sendable>(_ minimum: V) -> Self {
        bounded(V.self) { $0 <= minimum ? "more than \(minimum.writtenValue.text)" : nil }
    }

    /// This stream parameter, read only for its latest element: its elements never make the
    /// component emit, so a feedback loop may close through it.
    public func sampled() -> Self {
        var copy = self
        copy.spec.isSampled = true
        return copy
    }

    private func bounded<V: ParameterConvertible & SendableMetatype>(
        _ type: V.Type, _ problem: @escaping @Sendable (V) -> String?
    ) -> Self {
        var copy = self
        copy.spec.bound = { value in V(checked: value).flatMap(problem) }
        return copy
    }
}

extension ParameterValues {
    /// The checked value of `parameter`: given, or its default.
    public subscript<T>(_ parameter: Parameter<T>) -> T { parameter.value(in: self) }

    /// Whether the file gave `parameter` (rather than it taking its default).
    public func has(_ parameter: any ParameterDeclaration) -> Bool { values[parameter.spec.name] != nil }
}

/// An enum of words, one parameter value each (`emit: items | page | all`).
public protocol ParameterChoice: ParameterConvertible, RawRepresentable, CaseIterable where RawValue == String {}

extension ParameterChoice {
    /// One of the cases' raw values.
    public static var parameterType: ParameterType { .oneOf(allCases.map(\.rawValue)) }
    /// The case whose raw value the file wrote.
    public init?(checked: Any) {
        guard let text = checked as? String else { return nil }
        self.init(rawValue: text)
    }
    /// The raw value.
    public var writtenValue: Value { .string(rawValue) }
}

extension String: ParameterConvertible {
    /// Text, as written.
    public static var parameterType: ParameterType { .string }
    /// The text.
    public var writtenValue: Value { .string(self) }
}

extension Int: ParameterConvertible {
    /// A whole number.
    public static var parameterType: ParameterType { .int }
    /// The number.
    public var writtenValue: Value { .int(self) }
}

extension Double: ParameterConvertible {
    /// A number.
    public static var parameterType: ParameterType { .number }
    /// The number.
    public var writtenValue: Value { .double(self) }
}

extension Bool: ParameterConvertible {
    /// `true` or `false`.
    public static var parameterType: ParameterType { .bool }
    /// The flag.
    public var writtenValue: Value { .bool(self) }
}

extension Duration: ParameterConvertible {
    /// `250ms`, `1.5s`, `2m`.
    public static var parameterType: ParameterType { .duration }
    /// The shortest way to write it.
    public var writtenValue: Value { .string(DurationSyntax.format(self)) }
}

extension Expression: ParameterConvertible {
    /// An expression over the element.
    public static var parameterType: ParameterType { .expression }
    /// Its source text.
    public var writtenValue: Value { .string(source) }
}

extension Template: ParameterConvertible {
    /// Text with `{{ expr }}` parts.
    public static var parameterType: ParameterType { .template }
    /// Its source text.
    public var writtenValue: Value { .string(source) }
}

extension Value: ParameterConvertible {
    /// Any JSON-like value, as written.
    public static var parameterType: ParameterType { .value }
    /// Itself.
    public var writtenValue: Value { self }
}

extension Array: ParameterConvertible where Element: ParameterConvertible {
    /// A list (a single value is taken as a list of one).
    public static var parameterType: ParameterType { .list(Element.parameterType) }
    /// The list's elements, each converted.
    public init?(checked: Any) {
        guard let items = checked as? [Any] else { return nil }
        var elements: [Element] = []
        for item in items {
            guard let element = Element(checked: item) else { return nil }
            elements.append(element)
        }
        self = elements
    }
    /// The elements as written.
    public var writtenValue: Value { .array(map(\.writtenValue)) }
}

/// The name of a stream of the pipeline (checked to exist; the stream is read through the
/// component context).
@_spi(Components) public struct StreamName: ParameterConvertible, Hashable, Sendable {
    /// The stream's name, or `ID.side` for a side stream.
    public let name: String

    /// A stream name.
    public static var parameterType: ParameterType { .stream }
    /// A stream name.
    public init(_ name: String) {
        self.name = name
    }
    /// The name.
    public var writtenValue: Value { .string(name) }
}

/// A mapping with free keys (query parameters, headers), its values of one type, in file order.
public struct ParameterMap<Element: ParameterConvertible>: ParameterConvertible {
    /// The keys and values in the order the file gives them.
    public let pairs: [(key: String, value: Element)]

    /// A mapping of `Element`.
    public static var parameterType: ParameterType { .map(Element.parameterType) }
    /// The mapping's pairs, each value converted.
    public init?(checked: Any) {
        guard let items = checked as? [(String, Any)] else { return nil }
        var pairs: [(key: String, value: Element)] = []
        for (key, item) in items {
            guard let element = Element(checked: item) else { return nil }
            pairs.append((key, element))
        }
        self.pairs = pairs
    }
    /// The mapping as written.
    public var writtenValue: Value {
        var object = JSONObject(capacity: pairs.count)
        for (key, value) in pairs { object[key] = value.writtenValue }
        return .object(object)
    }
}

extension ParameterValues.OperatorChain: ParameterConvertible {
    /// A list of operators, as a stream's `ops`.
    public static var parameterType: ParameterType { .operators }
    /// The operators' names.
    public var writtenValue: Value { .array(operators.map { .string($0.spec.name) }) }
}

extension ParameterValues.InnerSource: ParameterConvertible {
    /// A mapping with one source component.
    public static var parameterType: ParameterType { .source }
    /// Its name (sources have no written default).
    public var writtenValue: Value { .string(spec.name) }
}
