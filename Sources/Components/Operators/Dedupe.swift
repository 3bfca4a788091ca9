@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let key = Parameter<Expression?>(
        "key", doc: "What makes two elements the same (default: the whole element).", example: ".id")
    static let ttl = Parameter<RxTimeInterval?>(
        "ttl", doc: "How long a key is remembered after its element passed.", example: "10m"
    ).atLeast(RxTimeInterval.clockResolution)
    static let max = Parameter<Int>(
        "max", default: 100_000, doc: "The most keys remembered; the oldest is forgotten first.", example: "5000"
    ).atLeast(1)
}

extension BuiltinComponents {
    /// `dedupe: {key: EXPR, ttl: 10m, max: 100000}` — each key once (within its time to live).
    public static let dedupe = ComponentSpec(
        name: "dedupe",
        summary: "Drops an element whose key passed before (within ttl), remembering at most max keys.",
        docs: """
            Vector's dedupe: an element passes if no element with the same key passed before; with ttl, \
            a key is forgotten that long after its element passed (a dropped repeat does not extend it), \
            on the pipeline's clock. At most max keys are remembered, so memory is bounded whatever the \
            stream: past that, the key that passed longest ago is forgotten (and would pass again).
            """,
        parameters: [Key.key, Key.ttl, Key.max],
        primary: Key.key,
        example: "- dedupe: { key: .id, ttl: 10m, max: 100000 }",
        checkpointing: .keepsState("the keys it remembers, each with how long ago it passed (at most max)"),
        elementErrors: true,
        factory: .operator { parameters, context in
            let key = parameters[Key.key]
            let ttl = parameters[Key.ttl]
            let max = parameters[Key.max]
            let state = context.operatorState()
            return { [weak state] source in
                Observable.deferred {
                    let scope = context.makeScope()
                    var source = source
                    var selector: (Value) throws -> Value = { element in
                        guard let key else { return element }
                        return try context.evaluate(key, element, in: scope)
                    }
                    if let key, context.onError != .fail {
                        // The key is worked out first, so an element on which it fails is dropped
                        // as onError says; the operator then reads the key it found.
                        let found = StateBox(Value.null)
                        source = source.filter { element in
                            guard
                                let value = try context.handling(
                                    element, { try context.evaluate(key, element, in: scope) })
                            else { return false }
                            found.value = value
                            return true
                        }
                        selector = { _ in found.value }
                    }
                    return source.distinct(
                        by: selector, timeToLive: ttl, maxKeys: max, scheduler: context.scheduler, state: state)
                }
            }
        }
    ).keepingState(of: [Key.key]).runningOnAnyThread().declaring { traits in
        // Without a key it compares whole elements: the element decides its partition.
        traits.keyed(by: Key.key, otherwise: .anyKey)
    }
}
