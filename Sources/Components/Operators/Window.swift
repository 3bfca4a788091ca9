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
            let lateness = try parameters[Key.allowedLateness].map {
                (try EventTimeDomain.allowing($0, in: context), $0)
            }
            let chain = try parameters[Key.ops].map { try context.build($0) }
            let state = context.operatorState()
            return { [weak state] source in
                Observable.deferred {
                    // With ops, each window's list goes through the chain under the runtime's
                    // flatMap (the one merge of inner streams), which keeps the window's messages
                    // open until its chain is done.
                    let runs = chain.map(WindowRuns.init)
                    let lists = Observable { observer, lifetime in
                        WindowSink(
                            shape: shape, scheduler: scheduler, lateness: lateness, runs: runs, observer: observer,
                            lifetime: lifetime
                        ).run(source, state: state)
                    }
                    guard let runs else { return lists }
                    return lists.flatMap { list in runs.run(list.arrayValue ?? []) }
                }
            }
        }
    ).keepingState(of: [Key.every, Key.count, Key.slide, Key.sessionGap]).runningOnAnyThread().declaring { traits in
        traits.innerRun = "each window"
    }
}

/// The chains of one `window` subscription's windows (`ops`) still running: what each was given,
/// with its message, so a checkpoint keeps them to run again after a restart; and who to tell
/// when the last is done.
private final class WindowRuns {
    private let chain: PipelineOperator
    private var inputs: [Int: (items: [Value], origin: Origin?)] = [:]
    private var nextInput = 0
    /// Called when no chain runs any more.
    var idle: (() -> Void)?

    init(chain: @escaping PipelineOperator) {
        self.chain = chain
    }

    /// The chain over `items`, on behalf of the current message, kept until it completes.
    func run(_ items: [Value]) -> Observable<Value> {
        let number = nextInput
        nextInput += 1
        inputs[number] = (items, Origin.current)
        return chain(Observable.from(items)).do(onCompleted: { [weak self] in
            guard let self else { return }
            inputs[number] = nil
            if inputs.isEmpty { idle?() }
        })
    }

    var isIdle: Bool { inputs.isEmpty }
    /// The items of every chain still running, in the order they started.
    var running: [[Value]] { inputs.keys.sorted().compactMap { inputs[$0]?.items } }
    var origins: [Origin] { inputs.keys.sorted().compactMap { inputs[$0]?.origin } }
}

/// One subscription of `window`: its windows and the timer set for the earliest one's end. It
/// emits each closed window's list; with ops, it completes only once every window's chain has
/// (so the last checkpoint finds none still running).
private final class WindowSink {
    private let scheduler: any SchedulerType
    private let lateness: (domain: EventTimeDomain, allowed: RxTimeInterval)?
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private let windows: Windows
    private let timer = SerialDisposable()
    private let runs: WindowRuns?
    /// The window end the timer is set for: set again only when that changes.
    private var armedFor: RxTime?

    init(
        shape: WindowShape, scheduler: any SchedulerType, lateness: (EventTimeDomain, RxTimeInterval)?,
        runs: WindowRuns?, observer: AnyObserver<Value>, lifetime: Lifetime
    ) {
        self.scheduler = scheduler
        self.lateness = lateness
        self.observer = observer
        self.lifetime = lifetime
        // On event time windows are aligned to the epoch, not to where reading started.
        windows = Windows(shape: shape, origin: scheduler is EventTimeScheduler ? .zero : scheduler.now)
        self.runs = runs
        lifetime.add(timer)
    }

    /// Restores and keeps the windows in `state` (when the run keeps it), then reads `source`.
    func run(_ source: Observable<Value>, state: OperatorState<Value>?) {
        if let state { keep(in: state) }
        readEach(
            source, while: lifetime, in: lifetime.makeChild(),
            element: { [self] element in
                if let (domain, allowed) = lateness, let late = domain.lateTime {
                    // Behind the watermark, within allowedLateness: the windows of its time.
                    emitLists(
                        windows.addLate(
                            element, at: .milliseconds(late), now: scheduler.now, allowing: allowed,
                            origin: Origin.current))
                } else {
                    emit(windows.add(element, at: scheduler.now, origin: Origin.current))
                }
                arm()
            },
            failed: { [self] in
                observer.on(.error($0))
                lifetime.dispose()
            },
            completed: { [self] in
                emit(windows.closeAll())
                guard let runs, !runs.isIdle else { return complete() }
                runs.idle = { [weak self] in self?.complete() }
            })
    }

    private func complete() {
        if lifetime.isDisposed { return }
        observer.on(.completed)
        lifetime.dispose()
    }

    private func keep(in state: OperatorState<Value>) {
        if let restored = state.takeRestored() {
            let rerun = windows.restore(restored, now: scheduler.now)
            // Windows whose ops were running at the checkpoint run again.
            if runs != nil { for items in rerun { Origin.with(nil) { observer.on(.next(.array(items))) } } }
            arm()
        }
        state.keep(
            { [windows, runs, scheduler] in windows.saved(now: scheduler.now, running: runs?.running ?? []) },
            origins: { [windows, runs] in windows.open.flatMap(\.origins) + (runs?.origins ?? []) }, until: lifetime)
    }

    private func emit(_ closed: [Windows.Window]) {
        if let lateness { windows.keep(closed, now: scheduler.now, for: lateness.allowed) }
        emitLists(closed)
    }

    private func emitLists(_ closed: [Windows.Window]) {
        for window in closed where !window.items.isEmpty {
            // A window goes out on behalf of every message it holds.
            let origin = Origin.joining(window.origins)
            Origin.with(origin) { observer.on(.next(.array(window.items))) }
        }
    }

    /// Sets the timer for the earliest window's end, unless it is set for it already.
    private func arm() {
        guard let due = windows.nextEnd, due != armedFor else { return }
        armedFor = due
        // The timer works for no message of its own: the windows carry their elements'.
        timer.disposable = Origin.with(nil) {
            scheduler.schedule(after: max(.zero, due - scheduler.now)) { [self] in
                if lifetime.isDisposed { return }
                armedFor = nil
                emit(windows.close(upTo: scheduler.now))
                arm()
            }
        }
    }
}

/// What kind of windows `window` makes.
struct WindowShape {
    let every: RxTimeInterval?
    let count: Int?
    let slide: RxTimeInterval?
    let sessionGap: RxTimeInterval?
}

/// The open windows of one `window` subscription: a pure state machine over times and elements,
/// which the operator drives with the scheduler's clock.
final class Windows {
    struct Window {
        var start: RxTime
        var end: RxTime?
        var items: [Value] = []
        /// The origins of its items (none without a durable source).
        var origins: [Origin] = []
    }

    let shape: WindowShape
    private(set) var origin: RxTime
    private(set) var open: [Window] = []
    /// With allowedLateness: the windows emitted that a late element may still join, oldest first
    /// (all of one length, so by end too), from `emittedHead`: expired ones leave from the front
    /// without a scan or a copy of the rest, and a late element finds its window by halving.
    private var emittedStorage: [Window] = []
    private var emittedHead = 0
    var emitted: ArraySlice<Window> { emittedStorage[emittedHead...] }

    /// Forgets the emitted windows that ended `lateness` or more before `now`.
    private func forgetEmitted(now: RxTime, lateness: RxTimeInterval) {
        while emittedHead < emittedStorage.count, (emittedStorage[emittedHead].end ?? now) + lateness <= now {
            emittedStorage[emittedHead].items = []
            emittedHead += 1
        }
        if emittedHead > 1024 && emittedHead * 2 > emittedStorage.count {
            emittedStorage.removeFirst(emittedHead)
            emittedHead = 0
        }
    }

    /// Where the emitted window starting at `start` is, or would go (the first not before it).
    private func emittedPosition(of start: RxTime) -> Int {
        var low = emittedHead
        var high = emittedStorage.count
        while low < high {
            let middle = (low + high) / 2
            if emittedStorage[middle].start < start { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Keeps `window` among the emitted ones, in order (most come after the last).
    private func insertEmitted(_ window: Window) {
        if let last = emittedStorage.last, emittedHead < emittedStorage.count, window.start < last.start {
            emittedStorage.insert(window, at: emittedPosition(of: window.start))
        } else {
            emittedStorage.append(window)
        }
    }

    init(shape: WindowShape, origin: RxTime) {
        self.shape = shape
        self.origin = origin
    }

    /// The earliest time a window closes, if one is open.
    var nextEnd: RxTime? { open.compactMap(\.end).min() }

    /// Closes the windows that end at or before `now`, oldest first.
    func close(upTo now: RxTime) -> [Window] {
        var closed: [Window] = []
        open.removeAll { window in
            guard let end = window.end, end <= now else { return false }
            closed.append(window)
            return true
        }
        return closed
    }

    /// Every open window, oldest first.
    func closeAll() -> [Window] {
        defer { open.removeAll() }
        return open
    }

    /// What a checkpoint keeps: the time since the clock's origin, each open window's age, time
    /// left and items, and the items of windows whose ops were still running (`running`).
    func saved(now: RxTime, running: [[Value]]) -> Value {
        [
            "elapsed": Value(stateDuration: now - origin),
            "open": .array(
                open.map { window in
                    var object = JSONObject()
                    object["age"] = Value(stateDuration: now - window.start)
                    if let end = window.end { object["left"] = Value(stateDuration: end - now) }
                    object["items"] = .array(window.items)
                    return .object(object)
                }),
            "running": .array(running.map { .array($0) }),
            "emitted": .array(
                emitted.map { window in
                    var object = JSONObject()
                    object["age"] = Value(stateDuration: now - window.start)
                    object["length"] = Value(stateDuration: (window.end ?? window.start) - window.start)
                    object["items"] = .array(window.items)
                    return .object(object)
                }),
        ]
    }

    /// Goes on from what `saved` kept, as if no time had passed; returns the items of the
    /// windows whose ops must run again.
    func restore(_ saved: Value, now: RxTime) -> [[Value]] {
        origin = now - (saved["elapsed"]?.stateDuration ?? .zero)
        open = (saved["open"]?.arrayValue ?? []).map { window in
            Window(
                start: now - (window["age"]?.stateDuration ?? .zero),
                end: window["left"]?.stateDuration.map { now + $0 }, items: window["items"]?.arrayValue ?? [])
        }
        emittedStorage = (saved["emitted"]?.arrayValue ?? []).map { window in
            let start = now - (window["age"]?.stateDuration ?? .zero)
            return Window(
                start: start, end: start + (window["length"]?.stateDuration ?? .zero),
                items: window["items"]?.arrayValue ?? [])
        }.sorted { $0.start < $1.start }
        emittedHead = 0
        return (saved["running"]?.arrayValue ?? []).compactMap(\.arrayValue)
    }

    /// Keeps the windows just closed for late elements, until `now` is `lateness` past their end
    /// (without their messages: those went with the emitted lists).
    func keep(_ closed: [Window], now: RxTime, for lateness: RxTimeInterval) {
        for var window in closed {
            window.origins = []
            insertEmitted(window)
        }
        forgetEmitted(now: now, lateness: lateness)
    }

    /// Adds an element that came late, at `time` before `now`, to every window of length `every`
    /// (started every `slide`) that covers its time: an open one takes it as usual; one emitted
    /// less than `lateness` ago, or one that closed empty, takes it and is returned, to be
    /// emitted again (or for the first time).
    func addLate(
        _ element: Value, at time: RxTime, now: RxTime, allowing lateness: RxTimeInterval,
        origin elementOrigin: Origin? = nil
    ) -> [Window] {
        guard let every = shape.every else { return [] }
        forgetEmitted(now: now, lateness: lateness)
        let slide = shape.slide ?? every
        let last = Int64(((time - origin) / slide).rounded(.down))
        let first = Swift.max(0, Int64(((time - origin - every) / slide).rounded(.down)) + 1)
        var updated: [Window] = []
        for step in first...Swift.max(first, last) {
            let start = origin + slide * step
            let end = start + every
            guard start <= time, time < end else { continue }
            if end > now {
                if let position = open.firstIndex(where: { $0.start == start }) {
                    open[position].items.append(element)
                    if let elementOrigin { open[position].origins.append(elementOrigin) }
                } else {
                    open.append(
                        Window(start: start, end: end, items: [element], origins: elementOrigin.map { [$0] } ?? []))
                    open.sort { $0.start < $1.start }
                }
            } else if end + lateness > now {
                let position = emittedPosition(of: start)
                if position < emittedStorage.count, emittedStorage[position].start == start {
                    emittedStorage[position].items.append(element)
                    updated.append(emittedStorage[position])
                } else {
                    emittedStorage.insert(Window(start: start, end: end, items: [element]), at: position)
                    updated.append(Window(start: start, end: end, items: [element]))
                }
            }
        }
        // The messages of the windows emitted again go with them, as the late element's.
        return updated.map { window in
            var window = window
            window.origins = elementOrigin.map { [$0] } ?? []
            return window
        }
    }

    /// Adds an element at `now` on behalf of `elementOrigin`: what closes before it (a boundary at
    /// `now` included), then what it fills.
    func add(_ element: Value, at now: RxTime, origin elementOrigin: Origin? = nil) -> [Window] {
        var closed = close(upTo: now)
        if let gap = shape.sessionGap {
            if open.isEmpty { open.append(Window(start: now, end: now + gap)) }
            open[0].items.append(element)
            open[0].end = now + gap
            if let elementOrigin { open[0].origins.append(elementOrigin) }
        } else if let every = shape.every {
            let index = Int64(((now - origin) / every).rounded(.down))
            if let slide = shape.slide {
                // Every window of length `every`, started every `slide`, that covers `now`.
                let last = Int64(((now - origin) / slide).rounded(.down))
                var first = Int64(((now - origin - every) / slide).rounded(.down)) + 1
                first = Swift.max(0, first)
                for step in first...Swift.max(first, last) {
                    let start = origin + slide * step
                    guard start <= now, now < start + every else { continue }
                    if !open.contains(where: { $0.start == start }) {
                        open.append(Window(start: start, end: start + every))
                    }
                }
                open.sort { $0.start < $1.start }
                for position in open.indices {
                    open[position].items.append(element)
                    if let elementOrigin { open[position].origins.append(elementOrigin) }
                }
            } else {
                let start = origin + every * index
                if open.isEmpty { open.append(Window(start: start, end: start + every)) }
                open[0].items.append(element)
                if let elementOrigin { open[0].origins.append(elementOrigin) }
            }
        } else {
            if open.isEmpty { open.append(Window(start: now, end: nil)) }
            open[0].items.append(element)
            if let elementOrigin { open[0].origins.append(elementOrigin) }
        }
        if let count = shape.count, let first = open.first, first.items.count >= count {
            closed.append(first)
            open.removeFirst()
        }
        return closed
    }
}
