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

    /// Values from checked entries.
    public init(entries: [String: Entry] = [:], given: Set<String> = []) {
        self.entries = entries
        self.given = given
    }

    /// Whether the file gave `name`.
    public func has(_ name: String) -> Bool { given.contains(name) }

    /// The entry for `name`.
    public subscript(name: String) -> Entry? { entries[name] }

    /// The string value of `name`.
    public func string(_ name: String) -> String? {
        if case .string(let string)? = entries[name] { return string }
        if case .value(.string(let string))? = entries[name] { return string }
        return nil
    }

    /// The integer value of `name`.
    public func int(_ name: String) -> Int? {
        switch entries[name] {
        case .int(let int)?: return int
        case .value(let value)?: return value.intValue
        default: return nil
        }
    }

    /// The number value of `name`.
    public func number(_ name: String) -> Double? {
        switch entries[name] {
        case .number(let double)?: return double
        case .int(let int)?: return Double(int)
        case .value(let value)?: return value.doubleValue
        default: return nil
        }
    }

    /// The bool value of `name`.
    public func bool(_ name: String) -> Bool? {
        switch entries[name] {
        case .bool(let bool)?: return bool
        case .value(.bool(let bool))?: return bool
        default: return nil
        }
    }

    /// The duration value of `name`.
    public func duration(_ name: String) -> RxTimeInterval? {
        if case .duration(let duration)? = entries[name] { return duration }
        return nil
    }

    /// The expression value of `name`.
    public func expression(_ name: String) -> Expression? {
        if case .expression(let expression)? = entries[name] { return expression }
        return nil
    }

    /// The template value of `name`.
    public func template(_ name: String) -> Template? {
        if case .template(let template)? = entries[name] { return template }
        return nil
    }

    /// The value of `name` as written.
    public func value(_ name: String) -> Value? {
        switch entries[name] {
        case .value(let value)?: return value
        case .int(let int)?: return .int(int)
        case .number(let double)?: return .double(double)
        case .bool(let bool)?: return .bool(bool)
        case .string(let string)?: return .string(string)
        default: return nil
        }
    }

    /// The list value of `name`.
    public func list(_ name: String) -> [Entry]? {
        if case .list(let list)? = entries[name] { return list }
        return nil
    }

    /// The mapping value of `name`.
    public func map(_ name: String) -> [(String, Entry)]? {
        if case .map(let map)? = entries[name] { return map }
        return nil
    }

    /// The nested parameters `name`.
    public func object(_ name: String) -> ParameterValues? {
        if case .object(let object)? = entries[name] { return object }
        return nil
    }

    /// The inner source `name`.
    public func source(_ name: String) -> InnerSource? {
        if case .source(let source)? = entries[name] { return source }
        return nil
    }
}
