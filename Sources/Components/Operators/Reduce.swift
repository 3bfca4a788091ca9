@_spi(Host) import Pipeline
import Reactive

private typealias Key = Accumulation

extension BuiltinComponents {
    /// `reduce: {seed: S, accumulator: EXPR}` — one total, when the stream completes.
    public static let reduce = ComponentSpec(
        name: "reduce",
        summary: "Accumulates the elements and emits the total once, when the stream completes.",
        docs: """
            As scan, with 'acc' the total so far and '.' the element, but only the final total is emitted, \
            followed by completion (RxSwift's reduce). An empty stream gives the seed. For totals per \
            period, put it inside window's ops, or use aggregate.
            """,
        parameters: [Key.seed, Key.accumulator],
        primary: Key.accumulator,
        example: "- reduce: { seed: 0, accumulator: acc + .bytes }",
        checkpointing: .keepsState("its total so far"),
        factory: .operator { parameters, context in
            let seed = parameters[Key.seed]
            let accumulator = parameters[Key.accumulator]
            return { source in
                Observable.deferred {
                    let scope = context.makeScope()
                    let state = StateBox(context.restoredState ?? seed)
                    context.keepState { state.value }
                    return source.reduce(state.value) { total, element in
                        scope.accumulator = total
                        state.value = try context.evaluate(accumulator, element, in: scope)
                        return state.value
                    }
                }
            }
        })
}
