@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let period = Parameter<RxTimeInterval>("period", doc: "The time between elements.", example: "1s").atLeast(
        RxTimeInterval.clockResolution)
    static let dueTime = Parameter<RxTimeInterval>("dueTime", doc: "The delay before the first element.", example: "2s")
    static let timerPeriod = Parameter<RxTimeInterval?>(
        "period", doc: "The time between later elements.", example: "500ms"
    ).atLeast(RxTimeInterval.clockResolution)
}

extension BuiltinComponents {
    /// `interval: PERIOD` — 0, 1, 2, ... every period.
    public static let interval = ComponentSpec(
        name: "interval",
        summary: "Emits 0, 1, 2, ... every period, the first one period after subscription.",
        docs: "It never completes on its own; follow it with take to stop it." + ClockDocs.fromSubscription,
        parameters: [Key.period],
        primary: Key.period,
        example: "source: { interval: 1s }",
        checkpointing: .keepsState(
            "how many elements it emitted and the time left until the next (it goes on as if no time had passed)"),
        delivery: Delivery(
            .atMostOnce,
            "ticks while no run is going are not made up; with --state a resumed run counts on from the last checkpoint"
        ),
        factory: .source { parameters, context in
            let period = parameters[Key.period]
            guard context.checkpoints != nil else {
                return PipelineSource { _ in
                    Observable<Int>.interval(period, scheduler: context.scheduler).map { Value.int($0) }
                }
            }
            let scheduler = context.scheduler
            return PipelineSource { _ in
                Observable.deferred {
                    // Counting goes on from the count it had reached, the next tick after the time
                    // it had left (a checkpoint of an older run kept the count alone).
                    let restored = context.restoredState
                    let emitted = StateBox(restored?.intValue ?? restored?["emitted"]?.intValue ?? 0)
                    let first = restored?["left"]?.stateDuration.map { min(period, max(.zero, $0)) } ?? period
                    let due = StateBox(scheduler.now + first)
                    context.keepState {
                        Value(stateRecord: [
                            ("emitted", .int(emitted.value)),
                            ("left", Value(stateDuration: max(.zero, due.value - scheduler.now))),
                        ])
                    }
                    let start = emitted.value
                    return Observable<Int>.timer(first, period: period, scheduler: scheduler).map { tick in
                        emitted.value = start + tick + 1
                        due.value = scheduler.now + period
                        return Value.int(start + tick)
                    }
                }
            }
        })

    /// `timer: DUE` — one element after a delay (or a count every period after it).
    public static let timer = ComponentSpec(
        name: "timer",
        summary: "Emits 0 after a delay and completes; with a period, keeps emitting 1, 2, ... every period.",
        docs: "The delay counts from subscription." + ClockDocs.fromSubscription,
        parameters: [Key.dueTime, Key.timerPeriod],
        primary: Key.dueTime,
        example: "source: { timer: 2s }",
        checkpointing: .keepsState(
            "how many elements it emitted and the time left until the next (it goes on as if no time had passed)"),
        delivery: Delivery(.atMostOnce, "ticks while no run is going are not made up"),
        factory: .source { parameters, context in
            let dueTime = parameters[Key.dueTime]
            let period = parameters[Key.timerPeriod]
            let scheduler = context.scheduler
            guard context.checkpoints != nil else {
                return PipelineSource { _ in
                    Observable<Int>.timer(dueTime, period: period, scheduler: scheduler).map { Value.int($0) }
                }
            }
            return PipelineSource { _ in
                Observable.deferred {
                    let restored = context.restoredState
                    let emitted = StateBox(restored?["emitted"]?.intValue ?? 0)
                    let first = restored?["left"]?.stateDuration ?? dueTime
                    // When the next element is due, for the checkpoint's time left.
                    let due = StateBox(scheduler.now + first)
                    context.keepState {
                        Value(stateRecord: [
                            ("emitted", .int(emitted.value)),
                            ("left", Value(stateDuration: max(.zero, due.value - scheduler.now))),
                        ])
                    }
                    if period == nil && emitted.value > 0 { return .empty() }
                    let start = emitted.value
                    return Observable<Int>.timer(first, period: period, scheduler: scheduler).map { tick in
                        emitted.value = start + tick + 1
                        if let period { due.value = scheduler.now + period }
                        return Value.int(start + tick)
                    }
                }
            }
        })
}
