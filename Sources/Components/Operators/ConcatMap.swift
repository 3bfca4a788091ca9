import Pipeline
import Reactive

extension BuiltinComponents {
    /// `concatMap: {SOURCE}` — an inner source per element, one after another.
    public static let concatMap = ComponentSpec(
        name: "concatMap",
        summary: "Runs an inner source for each element, one at a time, in order.",
        docs: "Later elements wait for the running inner to complete. Side streams: NAME.executing and NAME.errors.",
        parameters: InnerWork.parameters + [InnerWork.combine],
        primary: InnerWork.source,
        example: "- concatMap: { events: { timeline: \"{{ .events }}\" } }",
        sideStreams: InnerWork.sideStreams,
        checkpointing: InnerWork.checkpointing(waiting: true),
        factory: .operator { parameters, context in
            let work = try InnerWork(parameters: parameters, context: context)
            let state = context.operatorState()
            return { [weak state] in work.apply(to: $0, state: state) { $0.concatMap($1) } }
        }
    ).declaring { traits in
        traits.partitioning = { _ in .anyKey }
    }
}
