@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let streams = Parameter<[StreamName]>("streams", doc: "The other streams.", example: "[next, previous]")
}

extension BuiltinComponents {
    /// `merge: [STREAM, ...]` — this stream's elements and the others', as they come.
    public static let merge = ComponentSpec(
        name: "merge",
        summary: "Merges other streams into this one: every element of any of them, as it comes.",
        docs: "Completes when all have completed; an error from any fails at once.",
        parameters: [Key.streams],
        primary: Key.streams,
        example: "- merge: [previousTaps]",
        checkpointing: .stateless,
        factory: .operator { parameters, context in
            let others = parameters[Key.streams].map { context.stream($0.name) }
            return { source in Observable.merge([source] + others) }
        })
}
