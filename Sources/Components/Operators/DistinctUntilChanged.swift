@_spi(Host) import Pipeline
import Reactive

private enum Key {
    static let key = Parameter<Expression?>(
        "key", doc: "What to compare instead of the whole element.", example: "lower(.)")
}

extension BuiltinComponents {
    /// `distinctUntilChanged` (optionally `{key: EXPR}`) — drops repeats.
    public static let distinctUntilChanged = ComponentSpec(
        name: "distinctUntilChanged",
        summary: "Drops an element equal to the last one passed on (or with an equal key).",
        docs: """
            The first element always passes. With a key, elements are compared by the key's value and the \
            original element is emitted. Numbers compare by value (1 equals 1.0).
            """,
        parameters: [Key.key],
        primary: Key.key,
        example: "- distinctUntilChanged",
        factory: .operator { parameters, context in
            let key = parameters[Key.key]
            return { source in
                Observable.deferred {
                    let scope = context.makeScope()
                    guard let key else { return source.distinctUntilChanged { $0.isEqualInExpressions(to: $1) } }
                    return source.distinctUntilChanged(
                        { try context.evaluate(key, $0, in: scope) }, comparer: { $0.isEqualInExpressions(to: $1) })
                }
            }
        })
}
