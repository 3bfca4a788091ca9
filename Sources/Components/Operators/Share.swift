import Pipeline
import Reactive

extension BuiltinComponents {
    /// `share` (optionally `{replay: N}`) — one upstream subscription for several readers.
    public static let share = ComponentSpec(
        name: "share",
        summary: "Shares one subscription among the stream's readers, replaying the last elements to late ones.",
        docs: """
            A stream read by several sinks or streams is shared automatically; use share to replay \
            elements to readers that subscribe later.
            """,
        parameters: [
            ParameterSpec("replay", .int, default: 0, doc: "How many past elements a new reader gets.", example: "1")
        ],
        primary: "replay",
        example: "- share: { replay: 1 }",
        factory: .operator { parameters, _ in
            let replay = parameters.int("replay") ?? 0
            return { $0.share(replay: replay) }
        })
}
