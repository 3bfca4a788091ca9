import Pipeline
import Reactive

private enum Key {
    static let dueTime = Parameter<RxTimeInterval>("dueTime", doc: "The quiet period.", example: "500ms")
}

extension BuiltinComponents {
    /// `debounce: DURATION` — emits an element once the stream has been quiet for the duration.
    public static let debounce = ComponentSpec(
        name: "debounce",
        summary: "Emits an element only after a quiet period with no newer element.",
        docs: """
            Each element restarts the timer. When the stream completes, a pending element is emitted at \
            once, then completion; an error drops it.
            """ + ClockDocs.fromSubscription,
        parameters: [Key.dueTime],
        primary: Key.dueTime,
        example: "- debounce: 500ms",
        checkpointing: .keepsState("its pending element and the time left until it is due"),
        factory: .operator { parameters, context in
            let dueTime = parameters[Key.dueTime]
            let state = context.operatorState()
            return { [weak state] in $0.debounce(dueTime, scheduler: context.scheduler, state: state) }
        }
    ).runningOnAnyThread()
}
