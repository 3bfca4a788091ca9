import Pipeline
import Reactive

private enum Key {
    static let timeSpan = Parameter<RxTimeInterval>("timeSpan", doc: "The longest time a list collects.", example: "1s")
        .atLeast(RxTimeInterval.clockResolution)
    static let count = Parameter<Int>("count", default: 1000, doc: "The most elements in a list.", example: "100")
        .atLeast(1)
}

extension BuiltinComponents {
    /// `buffer: {timeSpan, count}` — groups elements into lists.
    public static let buffer = ComponentSpec(
        name: "buffer",
        summary: "Groups elements into lists, emitted every time span or when a count is reached.",
        docs: "A time span with no elements emits an empty list; completion emits the last list, even empty."
            + ClockDocs.fromSubscription,
        parameters: [Key.timeSpan, Key.count],
        primary: Key.timeSpan,
        example: "- buffer: { timeSpan: 1s, count: 100 }",
        checkpointing: .keepsState("the list it is collecting and the time left in its window"),
        factory: .operator { parameters, context in
            let timeSpan = parameters[Key.timeSpan]
            let count = max(1, parameters[Key.count])
            let state = context.operatorState()
            return { [weak state] in
                $0.buffer(timeSpan: timeSpan, count: count, scheduler: context.scheduler, state: state).map {
                    Value.array($0)
                }
            }
        }
    ).keepingState(of: [Key.timeSpan, Key.count]).runningOnAnyThread()
}
