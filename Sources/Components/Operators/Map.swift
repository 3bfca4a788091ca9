@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let transform = Parameter<Expression>.valueExpression(
        "expression", doc: "The new element.", example: "{ title: .headline.main, url: .web_url }")
}

extension BuiltinComponents {
    /// `map: EXPR` or `map: {key: EXPR, ...}` — transforms each element.
    public static let map = ComponentSpec(
        name: "map",
        summary: "Transforms each element with an expression, or builds an object from several.",
        docs: """
            Give one expression (`map: .owner.login`), or a mapping whose values are expressions, which \
            builds an object with those keys (`map: {title: .headline.main, url: .web_url}`). Nested \
            mappings and lists build nested values. A quoted value with {{ }} is a template. An \
            expression that fails on an element fails the pipeline; with onError: skip or errors the \
            element is dropped instead.
            """,
        parameters: [Key.transform],
        primary: Key.transform,
        example: "- map: { title: .headline.main, url: .web_url, date: .pub_date }",
        checkpointing: .stateless,
        elementErrors: true,
        factory: .elementwise { parameters, context in
            let expression = parameters[Key.transform]
            return {
                let scope = context.makeScope()
                guard context.onError == .fail else {
                    return { element in
                        try context.handling(element) { try context.evaluate(expression, element, in: scope) }
                    }
                }
                return { element in try context.evaluate(expression, taking: element, in: scope) }
            }
        })
}
