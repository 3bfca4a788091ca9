import Pipeline
import Reactive

extension BuiltinComponents {
    /// `filter: EXPR` — passes on the elements for which the expression is true.
    public static let filter = ComponentSpec(
        name: "filter",
        summary: "Passes on the elements for which an expression is true.",
        docs: """
            The expression sees the element as '.'. Anything but null, false, 0 and "" counts as true. \
            An expression that fails on an element (say len() of a number) fails the pipeline, naming \
            the operator, its place in the file and the element.
            """,
        parameters: [
            ParameterSpec("expression", .expression, required: true, doc: "The condition.", example: "len(.) >= 3")
        ],
        primary: "expression",
        example: "- filter: len(.) >= 3",
        factory: .operator { parameters, context in
            let expression = parameters.expression("expression")!
            return { source in
                Observable.deferred {
                    let scope = context.makeScope()
                    return source.filter { try context.evaluate(expression, $0, in: scope).isTruthy }
                }
            }
        })
}
