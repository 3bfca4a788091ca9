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
    // One class reference, so copying a Value retains one object and never looks up generic
    // metadata: the members (`Members`), or the bytes of an object read on demand (`RawObject`).
    // Shared until changed: a change to a shared or raw object first copies the members.
    private var box: ObjectBox

    private final class Members: ObjectBox, @unchecked Sendable {
        // Only changed through a box known to be unique (copy on write), so no other access can
        // overlap: the dynamic exclusivity checks would buy nothing.
        @exclusivity(unchecked) var keys: [String]
        @exclusivity(unchecked) var values: [Value]
        /// The place of each key, for objects of more than `indexThreshold` members.
        @exclusivity(unchecked) var positions: [String: Int]?

        init(keys: [String], values: [Value], positions: [String: Int]? = nil) {
            self.keys = keys
            self.values = values
            self.positions = positions
            super.init(isRaw: false)
        }

        /// The key's place: the index of a large object, or a scan comparing lengths first
        /// (cheap for the short keys records have, it skips most full comparisons).
        @inline(__always)
        func position(of key: String) -> Int? {
            if let positions { return positions[key] }
            let length = key.utf8.count
            return keys.withUnsafeBufferPointer { buffer in
                for position in buffer.indices where buffer[position].utf8.count == length && buffer[position] == key {
                    return position
                }
                return nil
            }
        }

        /// Appends a member whose key is not there yet, keeping the index up to date.
        func append(_ key: String, _ value: Value) {
            keys.append(key)
            values.append(value)
            if positions != nil {
                positions![key] = keys.count - 1
            } else if keys.count > JSONObject.indexThreshold {
                rebuildIndex()
            }
        }

        func rebuildIndex() {
            guard keys.count > JSONObject.indexThreshold else {
                positions = nil
                return
            }
            var built: [String: Int] = [:]
            built.reserveCapacity(keys.count)
            for (position, key) in keys.enumerated() { built[key] = position }
            positions = built
        }
    }

    /// The members of every empty object until one is changed.
    private static let noMembers = Members(keys: [], values: [])

    /// The object's storage, which an evaluation scope keeps unretained beside an element
    /// holding it (`EvaluationScope.element`).
    @inline(__always)
    var storage: ObjectBox { box }

    /// The storage, moved out of the object.
    @inline(__always)
    consuming func takeStorage() -> ObjectBox { box }

    /// Member `key` of the object whose storage is `box`.
    @inline(__always)
    static func member(_ key: String, of box: ObjectBox) -> Value? {
        if box.isRaw {
            let raw = unsafeDowncast(box, to: RawObject.self)
            return raw.position(of: key).map(raw.value(at:))
        }
        let members = unsafeDowncast(box, to: Members.self)
        return members.position(of: key).map { members.values[$0] }
    }

    /// The object's bytes, when it is kept as read.
    @inline(__always)
    var raw: RawObject? {
        box.isRaw ? unsafeDowncast(box, to: RawObject.self) : nil
    }

    /// Objects of more members than this keep an index of their keys.
    static let indexThreshold = 12

    /// An empty object.
    public init() {
        box = Self.noMembers
    }

    /// An object of these members; the keys must be distinct. Objects built from one key list
    /// (the objects a `map` expression makes) share its storage.
    @_spi(Components) public init(distinctKeys keys: [String], values: [Value]) {
        precondition(keys.count == values.count, "one value per key")
        let members = Members(keys: keys, values: values)
        if keys.count > Self.indexThreshold { members.rebuildIndex() }
        box = members
    }

    /// An object of these members, with the index of its keys when it has over `indexThreshold`.
    init(distinctKeys keys: [String], values: [Value], positions: [String: Int]?) {
        box = Members(keys: keys, values: values, positions: positions)
    }

    /// An empty object with room for `capacity` members.
    @_spi(Components) public init(capacity: Int) {
        var keys: [String] = []
        var values: [Value] = []
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        box = Members(keys: keys, values: values)
    }

    /// An object kept as its bytes.
    init(raw: RawObject) {
        box = raw
    }

    /// The keys, in order.
    public var keys: [String] { raw?.keys ?? unsafeDowncast(box, to: Members.self).keys }

    /// The values, in the order of `keys`.
    public var values: [Value] { raw?.values ?? unsafeDowncast(box, to: Members.self).values }

    /// The number of members.
    public var count: Int { raw?.members.count ?? unsafeDowncast(box, to: Members.self).keys.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { count == 0 }

    /// The members, made this object's own before a change: copied when shared, parsed when
    /// kept as bytes.
    private mutating func uniqueMembers() -> Members {
        if !box.isRaw, isKnownUniquelyReferenced(&box) { return unsafeDowncast(box, to: Members.self) }
        let copy: Members
        if let raw {
            copy = Members(keys: raw.keys, values: raw.values)
            copy.rebuildIndex()
        } else {
            let shared = unsafeDowncast(box, to: Members.self)
            copy = Members(keys: shared.keys, values: shared.values, positions: shared.positions)
        }
        box = copy
        return copy
    }

    /// Whether the object has `key` (cheaper than reading it).
    public func contains(key: String) -> Bool {
        if let raw { return raw.position(of: key) != nil }
        return unsafeDowncast(box, to: Members.self).position(of: key) != nil
    }

    /// The value of `key`; setting nil removes the member, setting a new key appends it.
    public subscript(key: String) -> Value? {
        get { Self.member(key, of: box) }
        set {
            let members = uniqueMembers()
            if let position = members.position(of: key) {
                if let newValue {
                    members.values[position] = newValue
                } else {
                    members.keys.remove(at: position)
                    members.values.remove(at: position)
                    members.rebuildIndex()
                }
            } else if let newValue {
                members.append(key, newValue)
            }
        }
    }

    /// Appends a member known not to be present yet (the JSON parser and object expressions check
    /// duplicates themselves).
    @_spi(Components) public mutating func appendUnchecked(_ key: String, _ value: Value) {
        uniqueMembers().append(key, value)
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
