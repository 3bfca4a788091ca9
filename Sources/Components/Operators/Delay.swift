import Pipeline
import Reactive

private enum Key {
    static let dueTime = Parameter<RxTimeInterval>("dueTime", doc: "How much later.", example: "200ms")
}

extension BuiltinComponents {
    /// `delay: DURATION` — shifts elements and completion later.
    public static let delay = ComponentSpec(
        name: "delay",
        summary: "Shifts every element, and completion, later by a duration.",
        docs: "Errors are not delayed: they go out at once and drop the elements still waiting."
            + ClockDocs.fromSubscription,
        parameters: [Key.dueTime],
        primary: Key.dueTime,
        example: "- delay: 200ms",
        checkpointing: .keepsState("the elements still waiting, each with the time it has left"),
        factory: .operator { parameters, context in
            let dueTime = parameters[Key.dueTime]
            let state = context.operatorState()
            return { [weak state] in $0.delay(dueTime, scheduler: context.scheduler, state: state) }
        }
    ).runningOnAnyThread()
}
