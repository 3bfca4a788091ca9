@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let stream = Parameter<StreamName?>(
        "stream", doc: "The stream whose first element ends this one.", example: "stop")
    static let condition = Parameter<Expression?>(
        "expression", doc: "The condition that ends the stream.", example: ".done")
    static let inclusive = Parameter<Bool>(
        "inclusive", default: false, doc: "With expression: emit the element that ends the stream.")
}

extension BuiltinComponents {
    /// `takeUntil: STREAM` or `takeUntil: {expression: EXPR}` — passes elements until a signal.
    public static let takeUntil = ComponentSpec(
        name: "takeUntil",
        summary: "Passes on elements until another stream emits, or until an expression becomes true.",
        docs: """
            With a stream, the other stream is subscribed first; if it completes without emitting, elements \
            keep flowing. With an expression, inclusive: true emits the element that ends the stream.
            """,
        parameters: [Key.stream, Key.condition, Key.inclusive],
        primary: Key.stream,
        example: "- takeUntil: stop",
        validate: { values, validation in validation.requireExactlyOne(Key.stream, Key.condition, in: values) },
        checkpointing: .stateless,
        elementErrors: true,
        factory: .operator { parameters, context in
            if let condition = parameters[Key.condition] {
                return predicateOperator(condition, inclusive: parameters[Key.inclusive], context) {
                    $0.take(until: $1, behavior: $2)
                }
            }
            let signal = parameters[Key.stream].map { context.stream($0.name) } ?? .never()
            return { $0.take(until: signal) }
        })
}
