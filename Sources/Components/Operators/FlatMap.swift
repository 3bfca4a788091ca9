import Pipeline
import Reactive

private enum Key {
    static let maxConcurrent = Parameter<Int?>(
        "maxConcurrent", doc: "The most inners running at once (no limit when absent).", example: "4"
    ).atLeast(1)
}

extension BuiltinComponents {
    /// `flatMap: {SOURCE}` — an inner source per element, all merged.
    public static let flatMap = ComponentSpec(
        name: "flatMap",
        summary: "Runs an inner source for each element and merges what they all emit.",
        docs: """
            The inner source's templates see the element as '.'. With maxConcurrent, further inners wait \
            their turn in order. Side streams: NAME.executing (true while any inner runs) and NAME.errors.
            """,
        parameters: InnerWork.parameters + [InnerWork.combine, Key.maxConcurrent],
        primary: InnerWork.source,
        example: "- flatMap: { events: { timeline: \"{{ .events }}\" } }",
        sideStreams: InnerWork.sideStreams,
        checkpointing: InnerWork.checkpointing(waiting: true),
        factory: .operator { parameters, context in
            let work = try InnerWork(parameters: parameters, context: context)
            let limit = parameters[Key.maxConcurrent]
            let state = context.operatorState()
            return { [weak state] in work.apply(to: $0, state: state) { $0.flatMap(maxConcurrent: limit, $1) } }
        }
    ).declaring { traits in
        traits.partitioning = { _ in .anyKey }
    }
}
