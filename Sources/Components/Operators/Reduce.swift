import Pipeline
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
        checkpointing: .keepsState(
            "its total so far; after a durable source (nats), each checkpoint acknowledges the messages the total holds"
        ),
        elementErrors: true,
        factory: .operator { parameters, context in
            // The runtime's reduce keeps the total, and with it the messages it stands for.
            let state = context.operatorState()
            return { [weak state] source in
                Accumulation.applying(source, parameters, context: context, state: state) {
                    $0.reduce($1, accumulator: $2, mapResult: { $0 }, state: state)
                }
            }
        }
    ).runningOnAnyThread().declaring { traits in
        traits.holdsUntilCompletion = true
    }
}
