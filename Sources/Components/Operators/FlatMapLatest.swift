import Pipeline
import Reactive

extension BuiltinComponents {
    /// `flatMapLatest: {SOURCE}` — an inner source per element; only the latest counts.
    public static let flatMapLatest = ComponentSpec(
        name: "flatMapLatest",
        summary: "Runs an inner source for each element, dropping (and cancelling) the previous one.",
        docs: """
            When an element arrives the previous inner is disposed at once — an HTTP request in flight is \
            cancelled — and the new one starts. Completes when the stream and the current inner have. \
            Side streams: NAME.executing and NAME.errors.
            """,
        parameters: InnerWork.parameters + [InnerWork.combine],
        primary: InnerWork.source,
        example: "- flatMapLatest: { events: { timeline: \"{{ .events }}\" } }",
        sideStreams: InnerWork.sideStreams,
        checkpointing: InnerWork.checkpointing(waiting: false),
        factory: .operator { parameters, context in
            let work = try InnerWork(parameters: parameters, context: context)
            let state = context.operatorState()
            return { [weak state] in work.apply(to: $0, state: state) { $0.flatMapLatest($1) } }
        })
}
