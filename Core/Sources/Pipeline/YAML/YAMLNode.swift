/// A node of a YAML document, with the place it starts in the file.
@_spi(Host) public final class YAMLNode: @unchecked Sendable {
    /// How a scalar was written, which decides how it is typed.
    public enum ScalarStyle: Sendable {
        /// Unquoted: `500ms`, `true`, `3`.
        case plain
        /// In single or double quotes.
        case quoted
        /// A `|` or `>` block.
        case block
    }

    /// What the node is.
    public enum Kind {
        /// A scalar's text (after `${VAR}` substitution) and style.
        case scalar(String, ScalarStyle)
        /// A sequence's items.
        case sequence([YAMLNode])
        /// A mapping's pairs, in file order.
        case mapping([YAMLPair])
    }

    /// What the node is.
    public let kind: Kind
    /// Where it starts.
    public let location: SourceLocation
    /// Where the scalar's text starts (after an opening quote), for pointing inside it.
    public let contentLocation: SourceLocation

    /// A node.
    public init(kind: Kind, location: SourceLocation, contentLocation: SourceLocation? = nil) {
        self.kind = kind
        self.location = location
        self.contentLocation = contentLocation ?? location
    }

    /// Whether the collection was written in flow style (`{a: 1}` or `[1, 2]`).
    public var isFlowStyle: Bool { isFlow }
    var isFlow = false
    /// Whether it is written inside `{ }` or `[ ]`, where a comma ends a plain value.
    public internal(set) var isInFlow = false
    /// Where a scalar or a flow collection ends (just after it), as the parser saw it.
    var writtenEnd: SourceLocation?

    /// The note for a problem with a plain value cut short inside `{ }` or `[ ]` (where a comma
    /// ends it), nil when the value is not such a one.
    public var commaNote: String? {
        guard isInFlow, case .scalar(_, .plain) = kind else { return nil }
        return "inside { } and [ ] a comma ends a value: quote an expression that contains commas"
    }

    /// Where the node ends, just after its last character (`rivulet test --update` replaces a
    /// node's text): a block collection ends where its last item does.
    public var end: SourceLocation {
        if let writtenEnd { return writtenEnd }
        switch kind {
        case .scalar: return location
        case .sequence(let items): return items.last?.end ?? location
        case .mapping(let pairs): return pairs.last?.value.end ?? location
        }
    }

    /// The scalar's text, or nil.
    public var scalar: String? {
        if case .scalar(let text, _) = kind { return text }
        return nil
    }

    /// The mapping's pairs, or nil.
    public var pairs: [YAMLPair]? {
        if case .mapping(let pairs) = kind { return pairs }
        return nil
    }

    /// The sequence's items, or nil.
    public var items: [YAMLNode]? {
        if case .sequence(let items) = kind { return items }
        return nil
    }

    /// The value of the mapping key `key`, or nil.
    public subscript(key: String) -> YAMLNode? {
        pairs?.first { $0.key.scalar == key }?.value
    }

    /// `scalar`, `sequence` or `mapping`, for messages.
    public var kindName: String {
        switch kind {
        case .scalar: return "a scalar"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// The node as a value: plain scalars are typed by YAML 1.2's core schema (`null`, `true`,
    /// `3`, `1.5`); quoted and block scalars are strings.
    public func toValue() -> Value {
        switch kind {
        case .scalar(let text, let style):
            return style == .plain ? Self.resolvePlain(text) : .string(text)
        case .sequence(let items):
            return .array(items.map { $0.toValue() })
        case .mapping(let pairs):
            var object = JSONObject()
            for pair in pairs { object[pair.key.scalar ?? pair.key.toValue().description] = pair.value.toValue() }
            return .object(object)
        }
    }

    /// Types a plain scalar by YAML 1.2's core schema.
    public static func resolvePlain(_ text: String) -> Value {
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf": return .double(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .double(-.infinity)
        case ".nan", ".NaN", ".NAN": return .double(.nan)
        default: break
        }
        guard let first = text.utf8.first,
            first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".")
                || (first >= 48 && first <= 57)
        else {
            return .string(text)
        }
        if let int = Int(text) { return .int(int) }
        if text.hasPrefix("0x"), let int = Int(text.dropFirst(2), radix: 16) { return .int(int) }
        if text.hasPrefix("0o"), let int = Int(text.dropFirst(2), radix: 8) { return .int(int) }
        if text.allSatisfy({ "0123456789+-.eE".contains($0) }), let double = Double(text) { return .double(double) }
        return .string(text)
    }
}

/// A key and its value in a mapping.
@_spi(Host) public struct YAMLPair: Sendable {
    /// The key node.
    public let key: YAMLNode
    /// The value node.
    public let value: YAMLNode

    /// A pair.
    public init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }
}
