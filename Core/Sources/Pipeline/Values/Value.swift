/// A JSON-like value: what flows through a pipeline.
///
/// Integers and doubles are kept apart, so `3` stays an integer and round-trips exactly; objects
/// keep their keys in insertion order, so output is stable and readable.
@frozen
public enum Value: Hashable, Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer that fits in 64 bits.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered list.
    indirect case array([Value])
    /// An object with ordered keys.
    case object(JSONObject)
}

extension Value {
    /// The name of the value's type, as messages print it: `null`, `bool`, `number`, `string`, `array`, `object`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The member `key` of an object, or nil.
    @inlinable
    public subscript(key: String) -> Value? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string, if this is one.
    @inlinable
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The number as a Double, if this is a number.
    @inlinable
    public var doubleValue: Double? {
        switch self {
        case .int(let int): return Double(int)
        case .double(let double): return double
        default: return nil
        }
    }

    /// The number as an Int, if this is an integer (or a double with no fractional part).
    @inlinable
    public var intValue: Int? {
        switch self {
        case .int(let int): return int
        case .double(let double):
            guard double.rounded() == double, let int = Int(exactly: double) else { return nil }
            return int
        default: return nil
        }
    }

    /// The bool, if this is one.
    @inlinable
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The elements, if this is an array.
    @inlinable
    public var arrayValue: [Value]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The object, if this is one.
    @inlinable
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// Whether the value counts as true in a condition: everything but `null`, `false`, `0`, `""`.
    @inlinable
    public var isTruthy: Bool {
        switch self {
        case .null: return false
        case .bool(let bool): return bool
        case .int(let int): return int != 0
        case .double(let double): return double != 0 && !double.isNaN
        case .string(let string): return !string.isEmpty
        case .array, .object: return true
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A bool.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A double.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    /// An object, keys in the order written.
    public init(dictionaryLiteral elements: (String, Value)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension Value: CustomStringConvertible {
    /// The value as compact JSON.
    public var description: String { JSONSerializer.string(self) }

    /// The value as text where text is wanted (a template, a URL, a header): a string as it is,
    /// anything else as compact JSON.
    public var text: String {
        if case .string(let string) = self { return string }
        return description
    }
}

/// An object with keys kept in insertion order. Lookups scan small objects and use an index for
/// large ones, which is fastest for the small records pipelines mostly carry.
public struct JSONObject: Hashable, Sendable, Sequence {
    /// The keys, in order.
    public private(set) var keys: [String] = []
    /// The values, in the order of `keys`.
    public private(set) var values: [Value] = []
    // Boxed, so copying a Value is a few retains and never a generic metadata lookup.
    private var indexBox: IndexBox?

    private final class IndexBox: @unchecked Sendable {
        var positions: [String: Int]
        init(_ positions: [String: Int]) {
            self.positions = positions
        }
    }

    private var index: [String: Int]? {
        get { indexBox?.positions }
        set { indexBox = newValue.map(IndexBox.init) }
    }

    private static let indexThreshold = 12

    /// An empty object.
    public init() {}

    /// An object of these members; the keys must be distinct. Objects built from one key list
    /// (the objects a `map` expression makes) share its storage.
    public init(distinctKeys keys: [String], values: [Value]) {
        precondition(keys.count == values.count, "one value per key")
        self.keys = keys
        self.values = values
        if keys.count > Self.indexThreshold { rebuildIndex() }
    }

    /// An empty object with room for `capacity` members.
    public init(capacity: Int) {
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// The number of members.
    public var count: Int { keys.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { keys.isEmpty }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        // Comparing lengths first is cheap for the short keys records have, and skips most
        // full comparisons.
        let length = key.utf8.count
        return keys.withUnsafeBufferPointer { buffer in
            for position in buffer.indices where buffer[position].utf8.count == length && buffer[position] == key {
                return position
            }
            return nil
        }
    }

    /// Whether the object has `key` (cheaper than reading it).
    public func contains(key: String) -> Bool {
        position(of: key) != nil
    }

    /// The value of `key`; setting nil removes the member, setting a new key appends it.
    public subscript(key: String) -> Value? {
        get {
            guard let position = position(of: key) else { return nil }
            return values[position]
        }
        set {
            if let position = position(of: key) {
                if let newValue {
                    values[position] = newValue
                } else {
                    keys.remove(at: position)
                    values.remove(at: position)
                    rebuildIndex()
                }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
                if indexBox != nil {
                    rebuildIndex()
                } else if keys.count > Self.indexThreshold {
                    rebuildIndex()
                }
            }
        }
    }

    /// Appends a member known not to be present yet (the JSON parser and object expressions check
    /// duplicates themselves).
    public mutating func appendUnchecked(_ key: String, _ value: Value) {
        keys.append(key)
        values.append(value)
        if let indexBox, isKnownUniquelyReferenced(&self.indexBox) {
            indexBox.positions[key] = keys.count - 1
        } else if keys.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    private mutating func rebuildIndex() {
        guard keys.count > Self.indexThreshold else {
            index = nil
            return
        }
        var built: [String: Int] = [:]
        built.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() { built[key] = position }
        index = built
    }

    /// The members in order.
    public func makeIterator() -> Zip2Sequence<[String], [Value]>.Iterator {
        zip(keys, values).makeIterator()
    }

    /// Objects are equal when they have the same members, whatever their order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs where rhs[key] != value { return false }
        return true
    }

    /// Hashes the members regardless of order.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for (key, value) in self {
            var member = Hasher()
            member.combine(key)
            member.combine(value)
            combined ^= member.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
