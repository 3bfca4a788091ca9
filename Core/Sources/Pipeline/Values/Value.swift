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
/// large ones, which is fastest for the small records pipelines mostly carry. An object read from
/// JSON Lines may be kept as its bytes until it is changed (see `JSONParser.parseOnDemand`): it
/// reads, compares and writes out exactly as the parsed object would.
public struct JSONObject: Hashable, Sendable, Sequence {
    private var storedKeys: [String] = []
    private var storedValues: [Value] = []
    // A class reference, so copying a Value is a few retains and never a generic metadata lookup:
    // the key index of a large object, or the bytes of one read on demand.
    private var box: ObjectBox?

    private final class IndexBox: ObjectBox, @unchecked Sendable {
        var positions: [String: Int]
        init(_ positions: [String: Int]) {
            self.positions = positions
            super.init(isRaw: false)
        }
    }

    /// The object's bytes, when it is kept as read.
    @inline(__always)
    var raw: RawObject? {
        guard let box, box.isRaw else { return nil }
        return unsafeDowncast(box, to: RawObject.self)
    }

    private var index: [String: Int]? {
        get {
            guard let box, !box.isRaw else { return nil }
            return unsafeDowncast(box, to: IndexBox.self).positions
        }
        set { box = newValue.map(IndexBox.init) }
    }

    private static let indexThreshold = 12

    /// An empty object.
    public init() {}

    /// An object of these members; the keys must be distinct. Objects built from one key list
    /// (the objects a `map` expression makes) share its storage.
    public init(distinctKeys keys: [String], values: [Value]) {
        precondition(keys.count == values.count, "one value per key")
        self.storedKeys = keys
        self.storedValues = values
        if keys.count > Self.indexThreshold { rebuildIndex() }
    }

    /// An empty object with room for `capacity` members.
    public init(capacity: Int) {
        storedKeys.reserveCapacity(capacity)
        storedValues.reserveCapacity(capacity)
    }

    /// An object kept as its bytes.
    init(raw: RawObject) {
        box = raw
    }

    /// The keys, in order.
    public var keys: [String] { raw?.keys ?? storedKeys }

    /// The values, in the order of `keys`.
    public var values: [Value] { raw?.values ?? storedValues }

    /// The number of members.
    public var count: Int { raw?.members.count ?? storedKeys.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { count == 0 }

    /// Parses the members of an object kept as bytes, before it is changed.
    private mutating func materialize() {
        guard let raw else { return }
        storedKeys = raw.keys
        storedValues = raw.values
        box = nil
        if storedKeys.count > Self.indexThreshold { rebuildIndex() }
    }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return linearPosition(of: key)
    }

    /// The key's place found by comparing each: lengths first, cheap for the short keys records
    /// have, which skips most full comparisons.
    @inline(__always)
    private func linearPosition(of key: String) -> Int? {
        let length = key.utf8.count
        return storedKeys.withUnsafeBufferPointer { buffer in
            for position in buffer.indices where buffer[position].utf8.count == length && buffer[position] == key {
                return position
            }
            return nil
        }
    }

    /// Whether the object has `key` (cheaper than reading it).
    public func contains(key: String) -> Bool {
        if let raw { return raw.position(of: key) != nil }
        return position(of: key) != nil
    }

    /// The value of `key`; setting nil removes the member, setting a new key appends it.
    public subscript(key: String) -> Value? {
        get {
            if let box {
                if box.isRaw {
                    let raw = unsafeDowncast(box, to: RawObject.self)
                    return raw.position(of: key).map(raw.value(at:))
                }
                return unsafeDowncast(box, to: IndexBox.self).positions[key].map { storedValues[$0] }
            }
            return linearPosition(of: key).map { storedValues[$0] }
        }
        set {
            materialize()
            if let position = position(of: key) {
                if let newValue {
                    storedValues[position] = newValue
                } else {
                    storedKeys.remove(at: position)
                    storedValues.remove(at: position)
                    rebuildIndex()
                }
            } else if let newValue {
                storedKeys.append(key)
                storedValues.append(newValue)
                if box != nil {
                    rebuildIndex()
                } else if storedKeys.count > Self.indexThreshold {
                    rebuildIndex()
                }
            }
        }
    }

    /// Appends a member known not to be present yet (the JSON parser and object expressions check
    /// duplicates themselves).
    public mutating func appendUnchecked(_ key: String, _ value: Value) {
        materialize()
        storedKeys.append(key)
        storedValues.append(value)
        if box != nil, isKnownUniquelyReferenced(&box) {
            unsafeDowncast(box!, to: IndexBox.self).positions[key] = storedKeys.count - 1
        } else if storedKeys.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    private mutating func rebuildIndex() {
        guard storedKeys.count > Self.indexThreshold else {
            index = nil
            return
        }
        var built: [String: Int] = [:]
        built.reserveCapacity(storedKeys.count)
        for (position, key) in storedKeys.enumerated() { built[key] = position }
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
