@_spi(Components) import Reactive

/// An element that can spell state, as the pipeline's values do.
indirect enum Saved: StateRepresentable, Hashable, CustomStringConvertible {
    case integer(Int)
    case list([Saved])
    case record([String], [Saved])

    init(stateInteger: Int) { self = .integer(stateInteger) }
    var stateInteger: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }
    init(stateList: [Saved]) { self = .list(stateList) }
    var stateList: [Saved]? {
        if case .list(let items) = self { return items }
        return nil
    }
    init(stateRecord: [(String, Saved)]) { self = .record(stateRecord.map(\.0), stateRecord.map(\.1)) }
    func stateField(_ name: String) -> Saved? {
        guard case .record(let names, let values) = self, let index = names.firstIndex(of: name) else { return nil }
        return values[index]
    }
    var description: String {
        switch self {
        case .integer(let value): return "\(value)"
        case .list(let items): return "\(items)"
        case .record(let names, let values):
            return "{" + zip(names, values).map { "\($0): \($1)" }.joined(separator: ", ") + "}"
        }
    }
}

extension Saved: ExpressibleByIntegerLiteral {
    init(integerLiteral value: Int) { self = .integer(value) }
}

extension Saved: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: Saved...) { self = .list(elements) }
}
