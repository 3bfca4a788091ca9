import Foundation
import Pipeline
import Reactive

/// Items out of a page body.
enum ItemSelection {
    /// The items an expression picks out of the body (the body itself when it is a list and no
    /// expression is given).
    static func items(_ body: Value, select: Pipeline.Expression?, context: ComponentContext, scope: EvaluationScope)
        throws
        -> [Value]
    {
        let selected = try select.map { try context.evaluate($0, body, in: scope) } ?? body
        switch selected {
        case .array(let items): return items
        case .null: return []
        default:
            if select == nil { return [selected] }
            throw SelectionError(
                description: "select '\(select!.source)' gave \(selected.typeName), not a list of items")
        }
    }

    /// The list at a path of keys, for the API sources (missing or null: no items).
    static func list(_ body: Value, at path: [String]) throws -> [Value] {
        var current = body
        for key in path {
            guard case .object(let object) = current else {
                throw SelectionError(description: "expected an object with '\(key)', found \(current.typeName)")
            }
            current = object[key] ?? .null
        }
        switch current {
        case .array(let items): return items
        case .null: return []
        default:
            throw SelectionError(
                description: "expected a list at '\(path.joined(separator: "."))', found \(current.typeName)")
        }
    }
}

/// A body whose shape is not the one expected.
struct SelectionError: Error, CustomStringConvertible {
    let description: String
}
