/// What a parsed expression depends on (the element, `acc`, `now()`, `random()`), read before
/// it is compiled: whether it may run on several threads, or be folded to a constant.
extension ExpressionCompiler {
    /// Whether `verdict` holds for the node: it decides a node by returning true or false, or
    /// returns nil to let the node's parts decide (all of them must hold).
    static func holds(_ node: ExpressionNode, _ verdict: (ExpressionNode) -> Bool?) -> Bool {
        if let decided = verdict(node) { return decided }
        switch node {
        case .literal, .element, .accumulator: return true
        case .member(let base, _, _): return holds(base, verdict)
        case .index(let base, let index, _): return holds(base, verdict) && holds(index, verdict)
        case .unary(_, let operand, _): return holds(operand, verdict)
        case .binary(_, let lhs, let rhs, _): return holds(lhs, verdict) && holds(rhs, verdict)
        case .conditional(let a, let b, let c): return holds(a, verdict) && holds(b, verdict) && holds(c, verdict)
        case .call(_, let arguments, _): return arguments.allSatisfy { holds($0, verdict) }
        case .array(let elements): return elements.allSatisfy { holds($0, verdict) }
        case .object(let members): return members.allSatisfy { holds($0.1, verdict) }
        }
    }

    static func mentionsAccumulator(_ node: ExpressionNode) -> Bool {
        !holds(node) { part in
            if case .accumulator = part { return false }
            return nil
        }
    }

    /// Whether the node calls nothing that depends on when or in what order it runs (`now()`,
    /// `random()`): such an expression may run on several threads at once.
    static func isPure(_ node: ExpressionNode) -> Bool {
        holds(node) { part in
            if case .call(let name, _, _) = part, Functions.table[name]?.isPure != true { return false }
            return nil
        }
    }
}
