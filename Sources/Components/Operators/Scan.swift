@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// The parameters `scan` and `reduce` share.
enum Accumulation {
    static let seed = Parameter<Value>(
        "seed", default: .null, doc: "The accumulated value before the first element.", example: "0")
    static let accumulator = Parameter<Expression>.valueExpression(
        "accumulator", doc: "The next accumulated value, from 'acc' and '.'.", example: "acc + .")

    /// For one subscription: the value to start from (the seed, or what a checkpoint kept) and the
    /// step that evaluates the accumulator with `acc` set, keeping its result for checkpoints when
    /// the run keeps state (in `state` when the runtime's operator keeps it, else here).
    static func start(_ parameters: ParameterValues, context: ComponentContext, state: OperatorState<Value>?) -> (
        seed: Value, step: (Value, Value) throws -> Value
    ) {
        let accumulator = parameters[accumulator]
        let scope = context.makeScope()
        let evaluate: (Value, Value) throws -> Value = { acc, element in
            scope.accumulator = acc
            return try context.evaluate(accumulator, element, in: scope)
        }
        if let state { return (state.takeRestored() ?? parameters[seed], evaluate) }
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

extension Accumulation {
    /// `accumulate` (the runtime's scan or reduce) over `source` with the accumulator of
    /// `parameters`. Under onError skip or errors an element on which the accumulator fails is
    /// dropped before the operator sees it, and the accumulated value stays as it was.
    static func applying(
        _ source: Observable<Value>, _ parameters: ParameterValues, context: ComponentContext,
        state: OperatorState<Value>? = nil,
        _ accumulate:
            @escaping (Observable<Value>, Value, @escaping (Value, Value) throws -> Value) -> Observable<Value>
    ) -> Observable<Value> {
        Observable.deferred {
            let (seed, step) = start(parameters, context: context, state: state)
            guard context.onError != .fail else { return accumulate(source, seed, step) }
            let current = StateBox(seed)
            let stepped = source.filter { element in
                guard let next = try context.handling(element, { try step(current.value, element) }) else {
                    return false
                }
                current.value = next
                return true
            }
            return accumulate(stepped, seed) { _, _ in current.value }
        }
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
        example: "- scan: { seed: 0, accumulator: \"clamp(acc + ., 0, 9)\" }",
        checkpointing: .keepsState("its accumulated value"),
        elementErrors: true,
        factory: .operator { parameters, context in
            { source in
                Accumulation.applying(source, parameters, context: context) { $0.scan($1, accumulator: $2) }
            }
        }
    ).runningOnAnyThread()
}
