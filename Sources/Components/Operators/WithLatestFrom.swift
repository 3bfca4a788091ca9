@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let stream = Parameter<StreamName>("stream", doc: "The other stream.", example: "items").sampled()
    static let combine = Parameter<Expression?>.valueExpression(
        "combine", doc: "What to emit, from .value and .latest.", example: ".latest[.value]")
}

extension BuiltinComponents {
    /// `withLatestFrom: STREAM` — each element paired with another stream's latest.
    public static let withLatestFrom = ComponentSpec(
        name: "withLatestFrom",
        summary: "On each element, emits the latest element of another stream (or combines both).",
        docs: """
            Elements arriving before the other stream has produced one are dropped. With combine, the \
            expression sees {value: <this element>, latest: <the other's latest>} as '.'.
            """,
        parameters: [Key.stream, Key.combine],
        primary: Key.stream,
        example: "- withLatestFrom: { stream: items, combine: \".latest[.value] ?? .latest[0]\" }",
        checkpointing: .keepsState("the stream's latest element"),
        elementErrors: true,
        factory: .operator { parameters, context in
            let other = context.stream(parameters[Key.stream].name)
            let state = context.operatorState()
            guard let combine = parameters[Key.combine] else {
                return { [weak state] in $0.withLatestFrom(other, state: state) { $1 } }
            }
            return { [weak state] source in
                Observable.deferred {
                    let scope = context.makeScope()
                    guard context.onError != .fail else {
                        return source.withLatestFrom(other, state: state) { value, latest in
                            try context.evaluate(combine, ["value": value, "latest": latest], in: scope)
                        }
                    }
                    return source.withLatestFrom(other, state: state) { value, latest -> Value? in
                        let pair: Value = ["value": value, "latest": latest]
                        return try context.handling(pair, { try context.evaluate(combine, pair, in: scope) })
                    }.compactMap { $0 }
                }
            }
        })
}
