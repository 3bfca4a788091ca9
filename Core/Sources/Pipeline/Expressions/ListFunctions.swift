/// The list functions of expressions. `map`, `filter`, `reduce`, `sort`, `unique` and `group` take
/// an expression that is evaluated for each item, with `.` the item (and `acc` the running value
/// in `reduce`), as jq's `map(f)` does; the element outside is not visible inside.
enum ListFunctions {
    /// The functions that take an expression, with their docs for the reference. Their calls are
    /// compiled by `compile` (the expression is not a value), so these implementations never run.
    static let higherOrder: [(String, Functions.Function)] = [
        Functions.make("map", 2...2, "map(list, expr)", "Each item through expr (. is the item): map(.items, .name).") {
            _, _ in .null
        },
        Functions.make(
            "filter", 2...2, "filter(list, expr)", "The items for which expr is true: filter(., .stars > 10)."
        ) {
            _, _ in .null
        },
        Functions.make(
            "reduce", 3...3, "reduce(list, seed, expr)",
            "Folds the items: acc starts as seed and becomes expr for each item (. the item): reduce(., 0, acc + .n)."
        ) { _, _ in .null },
        Functions.make(
            "sort", 1...2, "sort(list, key?)",
            "The items in ascending order (of key, an expression over the item); null, booleans, numbers, strings, lists, objects. Stable."
        ) { _, _ in .null },
        Functions.make(
            "unique", 1...2, "unique(list, key?)", "The items without repeats (of key), the first of each kept."
        ) { _, _ in .null },
        Functions.make(
            "group", 2...2, "group(list, key)",
            "An object of the items by key (as text), in first-seen order: group(., .service)."
        ) { _, _ in .null },
    ]

    /// The functions that take only values.
    static let plain: [(String, Functions.Function)] = [
        Functions.make("flatten", 1...1, "flatten(list)", "The items of the lists in a list, in one list (one level).")
        {
            args, _ in
            .array(
                try Functions.array(args[0], "flatten").flatMap { item -> [Value] in
                    if case .array(let inner) = item { return inner }
                    return [item]
                })
        },
        Functions.make("entries", 1...1, "entries(o)", "The object's {key, value} pairs, in order.") { args, _ in
            guard case .object(let object) = args[0] else {
                throw ExpressionRuntimeError("entries() expects an object, got \(Operations.describe(args[0]))")
            }
            return .array(
                object.map { key, value in
                    var pair = JSONObject()
                    pair["key"] = .string(key)
                    pair["value"] = value
                    return .object(pair)
                })
        },
    ]

    /// The evaluator of a call to a function that takes an expression; nil for any other function.
    static func compile(_ name: String, _ arguments: [ExpressionNode]) throws(ExpressionSyntaxError)
        -> ExpressionCompiler.Evaluator?
    {
        guard higherOrder.contains(where: { $0.0 == name }) else { return nil }
        let list = try ExpressionCompiler.compileNode(arguments[0])
        switch name {
        case "map":
            let transform = try ExpressionCompiler.compileNode(arguments[1])
            return { scope in .array(try items(list, scope, name).map { item in try within(scope, item, transform) }) }
        case "filter":
            let condition = try ExpressionCompiler.compileNode(arguments[1])
            return { scope in
                .array(try items(list, scope, name).filter { item in try within(scope, item, condition).isTruthy })
            }
        case "reduce":
            return reduce(
                list, seed: try ExpressionCompiler.compileNode(arguments[1]),
                step: try ExpressionCompiler.compileNode(arguments[2]))
        case "sort":
            let key = try arguments.count > 1 ? ExpressionCompiler.compileNode(arguments[1]) : { $0.element }
            return { scope in
                let keyed = try items(list, scope, name).map { item in (key: try within(scope, item, key), item: item) }
                let sorted = keyed.enumerated().sorted { a, b in
                    let order = ordering(a.element.key, b.element.key)
                    return order != 0 ? order < 0 : a.offset < b.offset
                }
                return .array(sorted.map(\.element.item))
            }
        case "unique":
            let key = try arguments.count > 1 ? ExpressionCompiler.compileNode(arguments[1]) : { $0.element }
            return { scope in
                var seen = Set<Value>()
                return .array(
                    try items(list, scope, name).filter { item in seen.insert(try within(scope, item, key)).inserted })
            }
        default:  // group
            return group(list, by: try ExpressionCompiler.compileNode(arguments[1]))
        }
    }

    /// `reduce(list, seed, step)`: `step` folds each item (`.`) into the total (`acc`).
    private static func reduce(
        _ list: @escaping ExpressionCompiler.Evaluator, seed: @escaping ExpressionCompiler.Evaluator,
        step: @escaping ExpressionCompiler.Evaluator
    ) -> ExpressionCompiler.Evaluator {
        { scope in
            let values = try items(list, scope, "reduce")
            var total = try seed(scope)
            let (element, accumulator) = (scope.element, scope.accumulator)
            defer { (scope.element, scope.accumulator) = (element, accumulator) }
            for item in values {
                scope.element = item
                scope.accumulator = total
                total = try step(scope)
            }
            return total
        }
    }

    /// `group(list, key)`: an object of the items by the text of their key, keys in first-seen order.
    private static func group(
        _ list: @escaping ExpressionCompiler.Evaluator, by key: @escaping ExpressionCompiler.Evaluator
    ) -> ExpressionCompiler.Evaluator {
        { scope in
            // Members gathered by key first: appending to a JSON array in place would copy it per item.
            var members: [String: [Value]] = [:]
            var keys: [String] = []
            for item in try items(list, scope, "group") {
                let text = try within(scope, item, key).text
                if members[text] == nil { keys.append(text) }
                members[text, default: []].append(item)
            }
            var groups = JSONObject()
            for text in keys { groups[text] = .array(members[text] ?? []) }
            return .object(groups)
        }
    }

    /// A total order over values, for `sort`: null, booleans, numbers, strings, lists, objects;
    /// within a kind, the natural order (lists and objects by their JSON text).
    static func ordering(_ a: Value, _ b: Value) -> Int {
        func rank(_ value: Value) -> Int {
            switch value {
            case .null: return 0
            case .bool: return 1
            case .int, .double: return 2
            case .string: return 3
            case .array: return 4
            case .object: return 5
            }
        }
        let (left, right) = (rank(a), rank(b))
        if left != right { return left < right ? -1 : 1 }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.string(let x), .string(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.null, .null): return 0
        default:
            if let x = a.doubleValue, let y = b.doubleValue { return x == y ? 0 : (x < y ? -1 : 1) }
            let (x, y) = (a.description, b.description)
            return x == y ? 0 : (x < y ? -1 : 1)
        }
    }

    private static func items(_ list: ExpressionCompiler.Evaluator, _ scope: EvaluationScope, _ name: String) throws
        -> [Value]
    {
        try Functions.array(try list(scope), name)
    }

    /// `evaluator` with `.` the item, the scope's element put back after.
    private static func within(_ scope: EvaluationScope, _ item: Value, _ evaluator: ExpressionCompiler.Evaluator)
        throws -> Value
    {
        let element = scope.element
        defer { scope.element = element }
        scope.element = item
        return try evaluator(scope)
    }
}
