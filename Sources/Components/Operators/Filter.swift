@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let condition = Parameter<Expression>("expression", doc: "The condition.", example: "len(.) >= 3")
}

extension BuiltinComponents {
    /// `filter: EXPR` — passes on the elements for which the expression is true.
    public static let filter = ComponentSpec(
        name: "filter",
        summary: "Passes on the elements for which an expression is true.",
        docs: """
            The expression sees the element as '.'. Anything but null, false, 0 and "" counts as true. \
            An expression that fails on an element (say len() of a number) fails the pipeline, naming \
            the operator, its place in the file and the element; with onError: skip or errors the \
            element is dropped instead.
            """,
        parameters: [Key.condition],
        primary: Key.condition,
        example: "- filter: len(.) >= 3",
        checkpointing: .stateless,
        elementErrors: true,
        factory: .elementwise { parameters, context in
            let expression = parameters[Key.condition]
            return {
                let scope = context.makeScope()
                guard context.onError == .fail else {
                    return { element in
                        let keep = try context.handling(element) {
                            try context.evaluate(expression, element, in: scope).isTruthy
                        }
                        return keep == true ? .some(element) : .none
                    }
                }
                return { element in
                    let (holds, element) = try context.test(expression, element, in: scope)
                    return holds ? .some(element) : .none
                }
            }
        })
}
