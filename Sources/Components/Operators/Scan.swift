@_spi(Host) import Pipeline
import Reactive

/// The parameters `scan` and `reduce` share.
enum Accumulation {
    static let seed = Parameter<Value>(
        "seed", default: .null, doc: "The accumulated value before the first element.", example: "0")
    static let accumulator = Parameter<Expression>.valueExpression(
        "accumulator", doc: "The next accumulated value, from 'acc' and '.'.", example: "acc + .")

    /// For one subscription: the value to start from (the seed, or what a checkpoint kept) and the
    /// step that evaluates the accumulator with `acc` set, keeping its result for checkpoints when
    /// the run keeps state.
    static func start(_ parameters: ParameterValues, context: ComponentContext) -> (
        seed: Value, step: (Value, Value) throws -> Value
    ) {
        let accumulator = parameters[accumulator]
        let scope = context.makeScope()
        let evaluate: (Value, Value) throws -> Value = { acc, element in
            scope.accumulator = acc
            return try context.evaluate(accumulator, element, in: scope)
        }
        guard context.checkpoints != nil else { return (parameters[seed], evaluate) }
        let state = StateBox(context.restoredState ?? parameters[seed])
        context.keepState { state.value }
        return (
            state.value,
            { acc, element in
                state.value = try evaluate(acc, element)
                return state.value
            }
        )
    }
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
            { source in
                Observable.deferred {
                    let (seed, step) = Accumulation.start(parameters, context: context)
                    return source.scan(seed, accumulator: step)
                }
            }
        })
}
