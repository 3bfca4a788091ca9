@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let condition = Parameter<Expression>("expression", doc: "The condition.", example: ". < 10")
    static let inclusive = Parameter<Bool>("inclusive", default: false, doc: "Emit the element that ends the stream.")
}

extension BuiltinComponents {
    /// `takeWhile: EXPR` — passes elements while the expression holds.
    public static let takeWhile = ComponentSpec(
        name: "takeWhile",
        summary: "Passes on elements while an expression holds, then completes.",
        docs: "With inclusive: true the first element for which it is false is emitted before completion.",
        parameters: [Key.condition, Key.inclusive],
        primary: Key.condition,
        example: "- takeWhile: .page <= 5",
        checkpointing: .stateless,
        elementErrors: true,
        factory: .operator { parameters, context in
            predicateOperator(parameters[Key.condition], inclusive: parameters[Key.inclusive], context) {
                $0.take(while: $1, behavior: $2)
            }
        }
    ).runningOnAnyThread()

    /// An operator that tests each element with `expression` (on a scope of its own for each
    /// subscription) and honours `inclusive`: what takeWhile and takeUntil share.
    static func predicateOperator(
        _ expression: Expression, inclusive: Bool, _ context: ComponentContext,
        _ apply: @escaping (Observable<Value>, @escaping (Value) throws -> Bool, TakeBehavior) -> Observable<Value>
    ) -> PipelineOperator {
        let behavior: TakeBehavior = inclusive ? .inclusive : .exclusive
        return { source in
            Observable.deferred {
                let scope = context.makeScope()
                let test: (Value) throws -> Bool = { try context.evaluate(expression, $0, in: scope).isTruthy }
                guard context.onError != .fail else { return apply(source, test, behavior) }
                // The verdict is worked out before the operator sees the element, so one on which
                // the condition fails is dropped as onError says and never reaches it.
                let verdict = StateBox(false)
                let checked = source.filter { element in
                    guard let passed = try context.handling(element, { try test(element) }) else { return false }
                    verdict.value = passed
                    return true
                }
                return apply(checked, { _ in verdict.value }, behavior)
            }
        }
    }
}
