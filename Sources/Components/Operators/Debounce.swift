import Pipeline
import Reactive

extension BuiltinComponents {
    /// `debounce: DURATION` — emits an element once the stream has been quiet for the duration.
    public static let debounce = ComponentSpec(
        name: "debounce",
        summary: "Emits an element only after a quiet period with no newer element.",
        docs: """
            Each element restarts the timer. When the stream completes, a pending element is emitted at \
            once, then completion; an error drops it.
            """,
        parameters: [ParameterSpec("dueTime", .duration, required: true, doc: "The quiet period.", example: "500ms")],
        primary: "dueTime",
        example: "- debounce: 500ms",
        factory: .operator { parameters, context in
            let dueTime = parameters.duration("dueTime")!
            return { $0.debounce(dueTime, scheduler: context.scheduler) }
        })
}
