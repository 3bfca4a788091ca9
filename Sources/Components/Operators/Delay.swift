import Pipeline
import Reactive

extension BuiltinComponents {
    /// `delay: DURATION` — shifts elements and completion later.
    public static let delay = ComponentSpec(
        name: "delay",
        summary: "Shifts every element, and completion, later by a duration.",
        docs: "Errors are not delayed: they go out at once and drop the elements still waiting.",
        parameters: [ParameterSpec("dueTime", .duration, required: true, doc: "How much later.", example: "200ms")],
        primary: "dueTime",
        example: "- delay: 200ms",
        factory: .operator { parameters, context in
            let dueTime = parameters.duration("dueTime")!
            return { $0.delay(dueTime, scheduler: context.scheduler) }
        })
}
