import Reactive

/// A runtime operator's state in a checkpoint is a value: a record is an object, a list an array,
/// a duration its whole nanoseconds.
extension Value: StateRepresentable {
    /// An integer.
    public init(stateInteger: Int) { self = .int(stateInteger) }

    /// The integer this is, if it is one.
    public var stateInteger: Int? {
        if case .int(let integer) = self { return integer }
        return nil
    }

    /// An array.
    public init(stateList: [Value]) { self = .array(stateList) }

    /// The array's elements, if this is one.
    public var stateList: [Value]? { arrayValue }

    /// An object with the fields in the order given.
    public init(stateRecord: [(String, Value)]) {
        var object = JSONObject()
        for (name, value) in stateRecord { object[name] = value }
        self = .object(object)
    }

    /// The member `name` of an object.
    public func stateField(_ name: String) -> Value? { self[name] }
}
