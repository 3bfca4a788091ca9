import Pipeline
import Reactive

extension BuiltinComponents {
    /// `takeUntil: STREAM` or `takeUntil: {expression: EXPR}` — passes elements until a signal.
    public static let takeUntil = ComponentSpec(
        name: "takeUntil",
        summary: "Passes on elements until another stream emits, or until an expression becomes true.",
        docs: """
            With a stream, the other stream is subscribed first; if it completes without emitting, elements \
            keep flowing. With an expression, inclusive: true emits the element that ends the stream.
            """,
        parameters: [
            ParameterSpec("stream", .stream, doc: "The stream whose first element ends this one.", example: "stop"),
            ParameterSpec("expression", .expression, doc: "The condition that ends the stream.", example: ".done"),
            ParameterSpec(
                "inclusive", .bool, default: false, doc: "With expression: emit the element that ends the stream."),
        ],
        primary: "stream",
        example: "- takeUntil: stop",
        check: exactlyOne("stream", "expression"),
        factory: .operator { parameters, context in
            if let name = parameters.string("stream") {
                return { $0.take(until: context.stream(name)) }
            }
            return predicateOperator(parameters, context) { $0.take(until: $1, behavior: $2) }
        })
}
