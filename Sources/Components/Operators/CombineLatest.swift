@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let streams = Parameter<[StreamName]>("streams", doc: "The other streams.", example: "[items]")
}

extension BuiltinComponents {
    /// `combineLatest: [STREAM, ...]` — the latest element of each, as a list.
    public static let combineLatest = ComponentSpec(
        name: "combineLatest",
        summary: "Combines this stream with others: on every element of any, emits the latest of each as a list.",
        docs: """
            Nothing is emitted until every stream has produced an element. The list holds this stream's \
            latest first, then the others' in the order given. RxSwift's completion rule applies: it completes \
            when all have completed, or when an element arrives that can never be combined.
            """,
        parameters: [Key.streams],
        primary: Key.streams,
        example: "- combineLatest: [items]",
        checkpointing: .keepsState("each stream's latest element and which streams have completed"),
        factory: .operator { parameters, context in
            let others = parameters[Key.streams].map { context.stream($0.name) }
            let state = context.operatorState()
            return { [weak state] source in
                Observable.combineLatest([source] + others, state: state) { Value.array($0) }
            }
        })
}
