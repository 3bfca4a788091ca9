@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let every = Parameter<RxTimeInterval?>(
        "every", doc: "Sample every period, the first one period after subscription.", example: "1s"
    ).atLeast(RxTimeInterval.clockResolution)
    static let stream = Parameter<StreamName?>(
        "stream", doc: "Sample on each element of this stream instead.", example: "ticks")
    static let defaultValue = Parameter<Value?>(
        "default", doc: "Emitted at a sample when no element came since the last.", example: "0")
}

extension BuiltinComponents {
    /// `sample: 1s` or `sample: {stream: S}` — the latest element, at each tick.
    public static let sample = ComponentSpec(
        name: "sample",
        summary: "Emits the latest element at each tick (a period, or another stream's elements), if a new one came.",
        docs: """
            At each tick the latest element since the previous tick is emitted, or 'default' if given and \
            none came; else nothing. When the stream completes, the result completes at the next tick, \
            after what is pending (RxSwift's sample).
            """ + ClockDocs.fromSubscription,
        parameters: [Key.every, Key.stream, Key.defaultValue],
        primary: Key.every,
        example: "- sample: 1s",
        validate: { values, validation in
            if values.has(Key.every) == values.has(Key.stream) {
                validation.error("give one of every (a period) or stream (the ticks)", in: values)
            }
        },
        checkpointing: .keepsState(
            "the latest element and, with every, the time left until the next tick (with stream, the ticks are that stream's)"
        ),
        factory: .operator { parameters, context in
            let defaultValue = parameters[Key.defaultValue]
            let state = context.operatorState()
            let scheduler = context.scheduler
            if let name = parameters[Key.stream] {
                let ticks = context.stream(name.name)
                return { [weak state] source in source.sample(ticks, defaultValue: defaultValue, state: state) }
            }
            let period = parameters[Key.every] ?? .seconds(1)
            return { [weak state] source in
                source.sample(every: period, scheduler: scheduler, defaultValue: defaultValue, state: state)
            }
        }
    ).runningOnAnyThread()
}
