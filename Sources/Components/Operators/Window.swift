@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let every = Parameter<RxTimeInterval?>(
        "every", doc: "The length of a time window (tumbling; with slide, sliding).", example: "1m"
    ).atLeast(RxTimeInterval.clockResolution)
    static let count = Parameter<Int?>(
        "count", doc: "Close a window when it holds this many elements.", example: "1000"
    ).atLeast(1)
    static let slide = Parameter<RxTimeInterval?>(
        "slide", doc: "With every: a new window starts this often, so windows overlap.", example: "10s"
    ).atLeast(RxTimeInterval.clockResolution)
    static let ops = Parameter<ParameterValues.OperatorChain?>(
        "ops", doc: "Operators each window's elements go through (instead of emitting the list).",
        example: "[{ reduce: { seed: 0, accumulator: acc + .bytes } }]")
    static let sessionGap = Parameter<RxTimeInterval?>(
        "sessionGap", doc: "A session window: it closes after this long without an element.", example: "30s"
    ).atLeast(RxTimeInterval.clockResolution)
    static let allowedLateness = Parameter<RxTimeInterval?>(
        "allowedLateness",
        doc:
            "On event time, with every: how long after a window was emitted a late element still joins it (emitted again).",
        example: "1m"
    ).above(RxTimeInterval.zero)
}

extension BuiltinComponents {
    /// `window: {every: 1m, count: 1000, slide: 10s, sessionGap: 30s}` — elements in windows, as lists.
    public static let window = ComponentSpec(
        name: "window",
        summary: "Collects the elements into windows (tumbling, sliding, session or by count), each emitted as a list.",
        docs: """
            With every, window k covers [origin + k·every, origin + (k+1)·every), the origin being the \
            subscription on the pipeline's clock and the epoch on event time (see Timing below); an element \
            exactly on a boundary belongs to the window that starts there. With slide as well, a window of \
            length every starts every slide, and an element joins each window open at its time. With \
            sessionGap, a window opens at an element and closes once sessionGap passes without one (an \
            element exactly sessionGap after the last starts a new session). count closes a window when it \
            holds that many elements (the rest of its period starts a new one); alone, it makes windows \
            of count elements. A window is emitted when it closes, as a list; empty windows are not \
            emitted. On completion the open windows are emitted, oldest first, then completion; an error \
            discards them. With ops, each window's elements go through that chain of operators when the \
            window closes (written as a stream's ops), and what the chains emit is merged; the result \
            completes once the stream and every chain have. On an event-time stream (eventTime above it), \
            allowedLateness (with every) keeps each emitted window that long after its end: an element \
            that comes behind the watermark by at most that much joins each window that covers its time \
            and each such window is emitted again, whole, with the element at its end (a window that \
            closed empty is emitted then for the first time); later than that it is late as eventTime \
            says. A list has no room for update: true — aggregate, which has allowedLateness too, marks \
            its updates.
            """ + ClockDocs.alignedToTheEpoch,
        parameters: [Key.every, Key.count, Key.slide, Key.sessionGap, Key.allowedLateness, Key.ops],
        primary: Key.every,
        example: "- window: { every: 1m, count: 1000 }",
        validate: { values, validation in
            let timed = values.has(Key.every)
            if values.has(Key.sessionGap) && (timed || values.has(Key.slide)) {
                validation.error("sessionGap makes a session window: give it without every and slide", in: values)
            } else if values.has(Key.slide) && !timed {
                validation.error("slide needs every, the length of each window", at: Key.slide, in: values)
            } else if values.has(Key.slide) && values.has(Key.count) {
                validation.error("count cannot close overlapping windows: drop slide or count", in: values)
            } else if !timed && !values.has(Key.count) && !values.has(Key.sessionGap) {
                validation.error("give every (a time window), count, or sessionGap", in: values)
            }
            if values.has(Key.allowedLateness) && (!timed || values.has(Key.count)) {
                validation.error(
                    "allowedLateness is for time windows: give every, without count", at: Key.allowedLateness,
                    in: values)
            }
            if let every = values[Key.every], let slide = values[Key.slide], slide > every {
                validation.error(
                    "slide is longer than every: elements between windows would be lost", at: Key.slide, in: values)
            }
        },
        checkpointing: .keepsState(
            "its open windows (each one's items and the time it has left); a window whose ops were still running at the checkpoint runs them again (at-least-once for their output)"
        ),
        factory: .operator { parameters, context in
            let shape = WindowShape(
                every: parameters[Key.every], count: parameters[Key.count], slide: parameters[Key.slide],
                sessionGap: parameters[Key.sessionGap])
            let scheduler = context.scheduler
            // Late elements reach it only on event time, from the clock's eventTime.
            let lateness = try parameters[Key.allowedLateness].map { allowed in
                let domain = try EventTimeDomain<Value>.allowing(allowed, in: context)
                return WindowLateness(allowed: allowed, lateTime: { domain.lateTime.map { .milliseconds($0) } })
            }
            let chain = try parameters[Key.ops].map { try context.build($0) }
            let state = context.operatorState()
            return { [weak state] source in
                guard let chain else {
                    return source.buffer(shape, scheduler: scheduler, lateness: lateness, state: state).map {
                        .array($0)
                    }
                }
                return source.buffer(shape, scheduler: scheduler, lateness: lateness, state: state, through: chain)
            }
        }
    ).keepingState(of: [Key.every, Key.count, Key.slide, Key.sessionGap]).runningOnAnyThread().declaring { traits in
        traits.innerRun = "each window"
    }
}
