@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let streams = Parameter<[StreamName]>("streams", doc: "The other streams.", example: "[prices]")
}

extension BuiltinComponents {
    /// `zip: [STREAM, ...]` — the elements of this stream and others paired by position.
    public static let zip = ComponentSpec(
        name: "zip",
        summary: "Pairs this stream's elements with the other streams' by position, as lists.",
        docs: """
            The first element of each stream makes the first list (this stream's first), the second the \
            second, and so on; elements wait until every stream has one at their position. It completes \
            when every stream has completed, or when an element can never be paired because the other \
            streams have completed (RxSwift's zip over a collection).
            """,
        parameters: [Key.streams],
        primary: Key.streams,
        example: "- zip: [prices]",
        checkpointing: .keepsState("each stream's elements still waiting for a partner"),
        factory: .operator { parameters, context in
            let others = parameters[Key.streams].map { context.stream($0.name) }
            let state = context.operatorState()
            return { [weak state] source in Observable.zip([source] + others, state: state).map { Value.array($0) } }
        }
    ).keepingState(of: [Key.streams])
}
