/// The member names of objects an operator makes many of (an aggregate's rows, all with the same
/// names), prepared once: each object is made as its compact JSON text with the place of each
/// member, as a line read on demand is. The text is written where the object is made (a
/// partition's thread, for a split aggregate) rather than where a sink writes it out (the
/// pipeline's thread, which then copies the bytes), and an object is one allocation.
@_spi(Components) public final class ObjectLayout: @unchecked Sendable {  // immutable after init
    /// The members' names, in order.
    public let names: [String]
    /// Nil when a name needs an escape in JSON, two names are the same or there are more than
    /// 64: such objects are made of values.
    private let shape: ProjectionShape?

    /// A layout of `names`, in order.
    public init(names: [String]) {
        self.names = names
        let plain = names.count <= 64 && Set(names).count == names.count
        shape = plain ? ProjectionShape(keys: names, sources: names.map { _ in nil }) : nil
    }

    /// The object of this layout's names and `values` (one for each name, in order): made as its
    /// text unless a value holds a number JSON cannot write (NaN, infinity), then made of values.
    /// `scratch` is room the caller keeps from object to object.
    public func object(_ values: [Value], scratch: inout [UInt8]) -> Value {
        guard let shape, values.count == shape.count, !values.contains(where: { $0.holdsNonFiniteNumber }) else {
            return .object(JSONObject(distinctKeys: names, values: values))
        }
        scratch.removeAll(keepingCapacity: true)
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: values.count) { ends in
            for (index, value) in values.enumerated() {
                JSONSerializer.write(value, to: &scratch)
                ends[index] = scratch.count
            }
            let made = scratch.withUnsafeBufferPointer { written in
                RawObject.empty.projecting(shape, computed: written, ends: UnsafeBufferPointer(ends))
            }
            return .object(JSONObject(raw: made))
        }
    }
}
