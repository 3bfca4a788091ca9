@_spi(Components) import Pipeline
@_spi(Components) import Reactive

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
        checkpointing: .keepsState("the key of the last element it passed"),
        elementErrors: true,
        factory: .operator { parameters, context in
            let key = parameters[Key.key]
            return { source in
                Observable.deferred {
                    let scope = context.makeScope()
                    // Checkpointed, or with a key that may fail on an element under onError, the
                    // last key is kept here.
                    if context.checkpoints != nil || (key != nil && context.onError != .fail) {
                        // The key of the last element passed, kept as {last: KEY} ({} before the first).
                        let last = StateBox(context.restoredState?["last"])
                        context.keepState { last.value.map { ["last": $0] } ?? .object(JSONObject()) }
                        return source.filter { element in
                            guard
                                let current = try context.handling(
                                    element, { try key.map { try context.evaluate($0, element, in: scope) } ?? element }
                                )
                            else { return false }
                            if let previous = last.value, previous.isEqualInExpressions(to: current) { return false }
                            last.value = current
                            return true
                        }
                    }
                    guard let key else { return source.distinctUntilChanged { $0.isEqualInExpressions(to: $1) } }
                    return source.distinctUntilChanged(
                        { try context.evaluate(key, $0, in: scope) }, comparer: { $0.isEqualInExpressions(to: $1) })
                }
            }
        }
    ).runningOnAnyThread()
}
