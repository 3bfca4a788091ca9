import Pipeline
import Reactive

private enum Key {
    static let dueTime = Parameter<RxTimeInterval>("dueTime", doc: "The window.", example: "1s")
    static let latest = Parameter<Bool>("latest", default: true, doc: "Emit the window's latest element when it ends.")
}

extension BuiltinComponents {
    /// `throttle: DURATION` — at most one element per window.
    public static let throttle = ComponentSpec(
        name: "throttle",
        summary: "Emits at most one element per time window: the first at once, and the window's latest at its end.",
        docs: """
            With latest: true (the default, as in RxSwift) the last element of a window is emitted when the \
            window ends, and completion waits for it; with latest: false elements inside a window are dropped.
            """ + ClockDocs.fromSubscription,
        parameters: [Key.dueTime, Key.latest],
        primary: Key.dueTime,
        example: "- throttle: { dueTime: 1s, latest: false }",
        checkpointing: .keepsState(
            "how long ago it last sent an element, and the element waiting for its window's end"),
        factory: .operator { parameters, context in
            let dueTime = parameters[Key.dueTime]
            let latest = parameters[Key.latest]
            let state = context.operatorState()
            return { [weak state] in $0.throttle(dueTime, latest: latest, scheduler: context.scheduler, state: state) }
        }
    ).runningOnAnyThread()
}
