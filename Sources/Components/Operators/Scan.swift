@_spi(Host) import Pipeline
import Reactive

/// The parameters `scan` and `reduce` share.
enum Accumulation {
    static let seed = Parameter<Value>(
        "seed", default: .null, doc: "The accumulated value before the first element.", example: "0")
    static let accumulator = Parameter<Expression>.valueExpression(
        "accumulator", doc: "The next accumulated value, from 'acc' and '.'.", example: "acc + .")
}

private typealias Key = Accumulation

extension BuiltinComponents {
    /// `scan: {seed: S, accumulator: EXPR}` — accumulates, emitting each new value.
    public static let scan = ComponentSpec(
        name: "scan",
        summary: "Accumulates the elements, emitting each new accumulated value.",
        docs: """
            The accumulator sees the accumulated value as 'acc' and the element as '.'; its result is \
            the new 'acc', and is emitted. The seed is never emitted on its own (RxSwift's rule).
            """,
        parameters: [Key.seed, Key.accumulator],
        primary: Key.accumulator,
        example: "- scan: { seed: 0, accumulator: clamp(acc + ., 0, 9) }",
        checkpointing: .keepsState("its accumulated value"),
        factory: .operator { parameters, context in
            let seed = parameters[Key.seed]
            let accumulator = parameters[Key.accumulator]
            return { source in
                Observable.deferred {
                    let scope = context.makeScope()
                    guard context.checkpoints != nil else {
                        return source.scan(seed) { acc, element in
                            scope.accumulator = acc
                            return try context.evaluate(accumulator, element, in: scope)
                        }
                    }
                    let state = StateBox(context.restoredState ?? seed)
                    context.keepState { state.value }
                    return source.scan(state.value) { acc, element in
                        scope.accumulator = acc
                        state.value = try context.evaluate(accumulator, element, in: scope)
                        return state.value
                    }
                }
            }
        })
}
