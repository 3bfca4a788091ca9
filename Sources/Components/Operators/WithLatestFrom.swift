import Pipeline
import Reactive

extension BuiltinComponents {
    /// `withLatestFrom: STREAM` — each element paired with another stream's latest.
    public static let withLatestFrom = ComponentSpec(
        name: "withLatestFrom",
        summary: "On each element, emits the latest element of another stream (or combines both).",
        docs: """
            Elements arriving before the other stream has produced one are dropped. With combine, the \
            expression sees {value: <this element>, latest: <the other's latest>} as '.'.
            """,
        parameters: [
            ParameterSpec("stream", .stream, required: true, doc: "The other stream.", example: "items"),
            ParameterSpec(
                "combine", .valueExpression, doc: "What to emit, from .value and .latest.", example: ".latest[.value]"),
        ],
        primary: "stream",
        example: "- withLatestFrom: { stream: items, combine: \".latest[.value] ?? .latest[0]\" }",
        factory: .operator { parameters, context in
            let other = context.stream(parameters.string("stream")!)
            guard let combine = parameters.expression("combine") else {
                return { $0.withLatestFrom(other) }
            }
            return { source in
                Observable.deferred {
                    let scope = context.makeScope()
                    return source.withLatestFrom(other) { value, latest in
                        try context.evaluate(combine, ["value": value, "latest": latest], in: scope)
                    }
                }
            }
        })
}
