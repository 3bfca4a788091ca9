/// Turns parsed expressions into closures, folding constant parts at compile time.
enum ExpressionCompiler {
    typealias Evaluator = (EvaluationScope) throws -> Value

    /// Whether the node gives the same value whatever the element (no `.`, `acc`, `now`, `random`).
    static func isConstant(_ node: ExpressionNode) -> Bool {
        isPure(node)
            && holds(node) { part in
                switch part {
                case .element, .accumulator: return false
                default: return nil
                }
            }
    }

    static func compile(_ node: ExpressionNode) throws(ExpressionSyntaxError) -> Evaluator {
        let evaluator = try compileNode(node)
        if isConstant(node), case .literal = node {
            return evaluator
        } else if isConstant(node) {
            let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 0))
            if let value = try? evaluator(scope) { return { _ in value } }
        }
        return evaluator
    }

    /// `parseTime` and `formatTime` with a written format (and zone): checked here, so lint
    /// reports a bad one at its place, and made once instead of at each call.
    static func compileTimeFunction(_ name: String, _ arguments: [ExpressionNode], offset: Int)
        throws(ExpressionSyntaxError) -> Evaluator?
    {
        guard name == "parseTime" || name == "formatTime", arguments.count >= 2,
            case .literal(.string(let format)) = arguments[1]
        else { return nil }
        let pattern: TimeFormat?
        do {
            pattern = try TimeFunctions.pattern(format, reading: name == "parseTime")
        } catch {
            throw ExpressionSyntaxError(error.message, offset: offset)
        }
        let subject = try compileNode(arguments[0])
        if name == "parseTime" {
            return { scope in try TimeFunctions.parse(try subject(scope), format: format, pattern: pattern) }
        }
        var zone = TimeZoneRules.utc
        var zoneEvaluator: Evaluator?
        if arguments.count == 3 {
            if case .literal(let literal) = arguments[2] {
                do {
                    zone = try TimeFunctions.zone(literal)
                } catch {
                    throw ExpressionSyntaxError(error.message, offset: offset)
                }
            } else {
                zoneEvaluator = try compileNode(arguments[2])
            }
        }
        return { [zone] scope in
            let rules = try zoneEvaluator.map { try TimeFunctions.zone(try $0(scope)) } ?? zone
            return try TimeFunctions.format(try subject(scope), pattern: pattern, zone: rules)
        }
    }

    static func compileNode(_ node: ExpressionNode) throws(ExpressionSyntaxError) -> Evaluator {
        switch node {
        case .literal(let value):
            return { _ in value }
        case .element:
            return { $0.element }
        case .accumulator:
            return { $0.accumulator }
        case .member:
            return try compileMemberChain(node)
        case .index(let base, let index, _):
            let baseEvaluator = try compileNode(base)
            let indexEvaluator = try compileNode(index)
            return { scope in try Operations.index(try baseEvaluator(scope), try indexEvaluator(scope)) }
        case .unary(let op, let operand, _):
            let operandEvaluator = try compileNode(operand)
            if op == "!" { return { scope in .bool(!(try operandEvaluator(scope)).isTruthy) } }
            return { scope in try Operations.negate(try operandEvaluator(scope)) }
        case .binary(let op, let lhs, let rhs, _):
            return try compileBinary(op, lhs, rhs)
        case .conditional(let condition, let whenTrue, let whenFalse):
            let c = try compileNode(condition)
            let t = try compileNode(whenTrue)
            let f = try compileNode(whenFalse)
            return { scope in try c(scope).isTruthy ? try t(scope) : try f(scope) }
        case .call(let name, let arguments, let offset):
            guard let function = Functions.table[name] else {
                throw ExpressionSyntaxError("unknown function '\(name)'", offset: offset)
            }
            guard function.arity.contains(arguments.count) else {
                let expected =
                    function.arity.lowerBound == function.arity.upperBound
                    ? "\(function.arity.lowerBound)" : "\(function.arity.lowerBound) to \(function.arity.upperBound)"
                throw ExpressionSyntaxError(
                    "\(name)() takes \(expected) argument\(function.arity.upperBound == 1 ? "" : "s"), got \(arguments.count)",
                    offset: offset)
            }
            if let listFunction = try ListFunctions.compile(name, arguments) { return listFunction }
            if RegexFunctions.names.contains(name) {
                let evaluators = try arguments.map { (argument) throws(ExpressionSyntaxError) in
                    try compileNode(argument)
                }
                let subject = evaluators[0]
                let rest = Array(evaluators.dropFirst(2))
                // A pattern written as it is: compiled once, and a bad one is an error here.
                if case .literal(.string(let pattern)) = arguments[1] {
                    let regex: Regex<AnyRegexOutput>
                    switch RegexFunctions.compile(pattern) {
                    case .success(let compiled): regex = compiled
                    case .failure(let invalid): throw ExpressionSyntaxError(invalid.message, offset: offset)
                    }
                    return { scope in
                        try RegexFunctions.apply(name, try subject(scope), regex, try rest.map { try $0(scope) })
                    }
                }
                let pattern = evaluators[1]
                return { scope in
                    let value = try pattern(scope)
                    guard case .string(let text) = value else {
                        throw ExpressionRuntimeError(
                            "\(name)() expects a regular expression as a string, got \(Operations.describe(value))")
                    }
                    switch RegexFunctions.compile(text) {
                    case .success(let regex):
                        return try RegexFunctions.apply(name, try subject(scope), regex, try rest.map { try $0(scope) })
                    case .failure(let invalid): throw ExpressionRuntimeError(invalid.message)
                    }
                }
            }
            if let timeFunction = try compileTimeFunction(name, arguments, offset: offset) { return timeFunction }
            let evaluators = try arguments.map { (argument) throws(ExpressionSyntaxError) in try compileNode(argument) }
            if name == "len" {
                let argument = evaluators[0]
                return { scope in try Functions.length(try argument(scope)) }
            }
            let implementation = function.implementation
            switch evaluators.count {
            case 0: return { scope in try implementation([], scope) }
            case 1:
                let a = evaluators[0]
                return { scope in
                    let argument = try a(scope)
                    scope.oneArgument[0] = argument
                    return try implementation(scope.oneArgument, scope)
                }
            case 2:
                let a = evaluators[0]
                let b = evaluators[1]
                return { scope in
                    let first = try a(scope)
                    let second = try b(scope)
                    scope.twoArguments[0] = first
                    scope.twoArguments[1] = second
                    return try implementation(scope.twoArguments, scope)
                }
            default:
                return { scope in try implementation(try evaluators.map { try $0(scope) }, scope) }
            }
        case .array(let elements):
            let evaluators = try elements.map { (element) throws(ExpressionSyntaxError) in try compileNode(element) }
            return { scope in .array(try evaluators.map { try $0(scope) }) }
        case .object(let members):
            let evaluators = try members.map { (member) throws(ExpressionSyntaxError) in try compileNode(member.1) }
            let fields = members.map { member -> String? in
                if case .member(.element, let name, _) = member.1 { return name }
                return nil
            }
            return objectEvaluator(keys: members.map(\.0), evaluators: evaluators, fields: fields)
        }
    }

    /// `.a.b.c` and `(x).a.b`: the whole chain of members compiled at once, its base once, so a
    /// chain of n names costs n steps to compile and to run (compiling it name by name walked the
    /// chain again at every name: a fuzzed 4 KB path took seconds).
    static func compileMemberChain(_ node: ExpressionNode) throws(ExpressionSyntaxError) -> Evaluator {
        var names: [String] = []
        var base = node
        while case .member(let inner, let name, _) = base {
            names.append(name)
            base = inner
        }
        names.reverse()
        guard case .element = base else {
            let baseEvaluator = try compileNode(base)
            return { scope in
                var value = try baseEvaluator(scope)
                for name in names { value = try Operations.member(value, name) }
                return value
            }
        }
        let first = names[0]
        guard names.count > 1 else { return { scope in try scope.member(first) } }
        let rest = names.dropFirst()
        let general: Evaluator = { scope in
            var value = try scope.member(first)
            for name in rest { value = try Operations.member(value, name) }
            return value
        }
        // `.a.b` on an object read on demand finds `b` in the bytes without parsing `a`.
        return { scope in
            if case .object(let object) = scope.element, let raw = object.raw, let value = raw.value(atPath: names) {
                return value
            }
            return try general(scope)
        }
    }

    /// An object of `keys`, each the value of its evaluator (`fields` says which are just a member
    /// of the element, for `projection`). Distinct keys share one key list; a repeated key keeps
    /// its last value.
    static func objectEvaluator(keys: [String], evaluators: [Evaluator], fields: [String?]) -> Evaluator {
        guard Set(keys).count == keys.count else {
            return { scope in
                var object = JSONObject(capacity: keys.count)
                for index in keys.indices { object[keys[index]] = try evaluators[index](scope) }
                return .object(object)
            }
        }
        let general: Evaluator = { scope in
            var values: [Value] = []
            values.reserveCapacity(evaluators.count)
            for evaluator in evaluators { values.append(try evaluator(scope)) }
            return .object(JSONObject(distinctKeys: keys, values: values))
        }
        guard fields.contains(where: { $0 != nil }) else { return general }
        return projection(keys: keys, fields: fields, evaluators: evaluators, otherwise: general)
    }

    /// `{key: .field, other: EXPR, ...}`: from an object read on demand, a new one whose fields'
    /// text is copied from the element's (pass-through) and whose other members are written as
    /// JSON once, as they are computed; from any other element, `general`. (`fields` has the
    /// element's member for each key that is one, nil for the others, whose `evaluators` run.)
    static func projection(
        keys: [String], fields: [String?], evaluators: [Evaluator], otherwise general: @escaping Evaluator
    ) -> Evaluator {
        guard let shape = ProjectionShape(keys: keys, sources: fields) else { return general }
        let computed = zip(fields, evaluators).compactMap { $0 == nil ? $1 : nil }
        if computed.isEmpty {
            return { scope in
                if let raw = scope.rawElement {
                    return .object(JSONObject(raw: raw._withUnsafeGuaranteedRef { $0.projecting(shape) }))
                }
                return try general(scope)
            }
        }
        return { scope in
            guard case .object(let object) = scope.element, let raw = object.raw else { return try general(scope) }
            var text = scope.memberText
            scope.memberText = []
            text.removeAll(keepingCapacity: true)
            defer { scope.memberText = text }
            return try withUnsafeTemporaryAllocation(of: Int.self, capacity: computed.count) { ends in
                for (index, evaluator) in computed.enumerated() {
                    let value = try evaluator(scope)
                    // NaN and infinity have no JSON form: such an object is built as values (the
                    // members computed so far are read back from their text, exact for the rest).
                    guard !value.holdsNonFiniteNumber else {
                        var values: [Value] = []
                        var position = 0
                        for (field, evaluator) in zip(fields, evaluators) {
                            if let field {
                                values.append(object[field] ?? .null)
                            } else if position < index {
                                let start = position == 0 ? 0 : ends[position - 1]
                                values.append(
                                    text.withUnsafeBufferPointer {
                                        RawObject.parseValidated(
                                            UnsafeBufferPointer(rebasing: $0[start..<ends[position]]))
                                    })
                                position += 1
                            } else if position == index {
                                values.append(value)
                                position += 1
                            } else {
                                values.append(try evaluator(scope))
                                position += 1
                            }
                        }
                        return .object(JSONObject(distinctKeys: keys, values: values))
                    }
                    JSONSerializer.write(value, to: &text)
                    ends[index] = text.count
                }
                let made = text.withUnsafeBufferPointer { written in
                    raw.projecting(shape, computed: written, ends: UnsafeBufferPointer(ends))
                }
                return .object(JSONObject(raw: made))
            }
        }
    }

    typealias Condition = (EvaluationScope) throws -> Bool

    /// An ordering comparison of two integers, decided by a switch rather than a closure call.
    enum IntOrder {
        case less, lessOrEqual, greater, greaterOrEqual

        init?(_ op: String) {
            switch op {
            case "<": self = .less
            case "<=": self = .lessOrEqual
            case ">": self = .greater
            case ">=": self = .greaterOrEqual
            default: return nil
            }
        }

        @inline(__always)
        func holds(_ lhs: Int, _ rhs: Int) -> Bool {
            switch self {
            case .less: lhs < rhs
            case .lessOrEqual: lhs <= rhs
            case .greater: lhs > rhs
            case .greaterOrEqual: lhs >= rhs
            }
        }
    }

    /// `node` as a condition: `&&`, `||`, `!` and comparisons give their Bool directly (a
    /// comparison with a constant integer decides two integers in one closure); anything else is
    /// evaluated and tested for truth.
    static func compileCondition(_ node: ExpressionNode) throws(ExpressionSyntaxError) -> Condition {
        switch node {
        case .binary("&&", let lhs, let rhs, _):
            let a = try compileCondition(lhs)
            let b = try compileCondition(rhs)
            return { scope in try a(scope) && b(scope) }
        case .binary("||", let lhs, let rhs, _):
            let a = try compileCondition(lhs)
            let b = try compileCondition(rhs)
            return { scope in try a(scope) || b(scope) }
        case .unary("!", let operand, _):
            let a = try compileCondition(operand)
            return { scope in try !a(scope) }
        case .binary(let op, let lhs, let rhs, _) where ["<", "<=", ">", ">="].contains(op):
            let left = try compileNode(lhs)
            let right = try compileNode(rhs)
            let test: @Sendable (Int) -> Bool
            switch op {
            case "<": test = { $0 < 0 }
            case "<=": test = { $0 <= 0 }
            case ">": test = { $0 > 0 }
            default: test = { $0 >= 0 }
            }
            guard case .literal(.int(let constant)) = rhs, let order = IntOrder(op) else {
                return { scope in test(try Operations.compare(try left(scope), try right(scope), op)) }
            }
            let other: (Value) throws -> Bool = { value in test(try Operations.compare(value, .int(constant), op)) }
            // `.stars >= 2500` and `len(.name) > 6` read the member in the closure itself: two
            // closure calls and a Value fewer an element than through `left`.
            if case .member(.element, let name, _) = lhs {
                return { scope in
                    if let raw = scope.rawElement,
                        let int = raw._withUnsafeGuaranteedRef({ $0.integer(ofMember: name) })
                    {
                        return order.holds(int, constant)
                    }
                    let value = try scope.member(name)
                    if case .int(let int) = value { return order.holds(int, constant) }
                    return try other(value)
                }
            }
            if case .call("len", let arguments, _) = lhs, arguments.count == 1,
                case .member(.element, let name, _) = arguments[0]
            {
                return { scope in
                    let value = try scope.member(name)
                    if case .string(let string) = value { return order.holds(string.count, constant) }
                    return try other(try Functions.length(value))
                }
            }
            return { scope in
                let value = try left(scope)
                if case .int(let int) = value { return order.holds(int, constant) }
                return try other(value)
            }
        default:
            let value = try compileNode(node)
            return { scope in try value(scope).isTruthy }
        }
    }

    static func compileBinary(_ op: String, _ lhs: ExpressionNode, _ rhs: ExpressionNode) throws(ExpressionSyntaxError)
        -> Evaluator
    {
        if ["&&", "||", "<", "<=", ">", ">="].contains(op) {
            // Conditions are compiled to closures giving a Bool: no Value made and tested between
            // the parts of `.stars >= 2500 && len(.name) > 6`.
            let condition = try compileCondition(.binary(op, lhs, rhs, offset: 0))
            return { scope in .bool(try condition(scope)) }
        }
        let l = try compileNode(lhs)
        let r = try compileNode(rhs)
        switch op {
        case "??":
            return { scope in
                let left = try l(scope)
                if case .null = left { return try r(scope) }
                return left
            }
        case "==": return { scope in .bool(Operations.equal(try l(scope), try r(scope))) }
        case "!=": return { scope in .bool(!Operations.equal(try l(scope), try r(scope))) }
        case "in": return { scope in .bool(try Operations.contains(try r(scope), try l(scope))) }
        case "+", "-", "*":
            // Two integers that do not overflow: decided here, with no look at the operator's text.
            let integer: (Int, Int) -> (partialValue: Int, overflow: Bool) =
                op == "+"
                ? { $0.addingReportingOverflow($1) }
                : op == "-"
                    ? { $0.subtractingReportingOverflow($1) }
                    : { $0.multipliedReportingOverflow(by: $1) }
            return { scope in
                let left = try l(scope)
                let right = try r(scope)
                if case .int(let x) = left, case .int(let y) = right {
                    let (result, overflow) = integer(x, y)
                    if !overflow { return .int(result) }
                }
                return try Operations.arithmetic(op, left, right)
            }
        default:
            return { scope in try Operations.arithmetic(op, try l(scope), try r(scope)) }
        }
    }
}

extension Value {
    /// Whether a NaN or an infinity is in it (they have no JSON form).
    var holdsNonFiniteNumber: Bool {
        switch self {
        case .double(let double): return !double.isFinite
        case .array(let items): return items.contains { $0.holdsNonFiniteNumber }
        case .object(let object): return object.raw == nil && object.values.contains { $0.holdsNonFiniteNumber }
        default: return false
        }
    }
}
