import Pipeline
import Reactive

private enum Key {
    static let replay = Parameter<Int>(
        "replay", default: 0, doc: "How many past elements a new reader gets.", example: "1"
    ).atLeast(0)
}

extension BuiltinComponents {
    /// `share` (optionally `{replay: N}`) — one upstream subscription for several readers.
    public static let share = ComponentSpec(
        name: "share",
        summary: "Shares one subscription among the stream's readers, replaying the last elements to late ones.",
        docs: """
            A stream read by several sinks or streams is shared automatically; use share to replay \
            elements to readers that subscribe later.
            """,
        parameters: [Key.replay],
        primary: Key.replay,
        example: "- share: { replay: 1 }",
        checkpointing: .stateless,
        factory: .operator { parameters, _ in
            let replay = parameters[Key.replay]
            return { $0.share(replay: replay) }
        })
}
