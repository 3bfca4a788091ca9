/// What windows `buffer(_:scheduler:)` collects elements into: by time (tumbling, or sliding with
/// `slide`), by session (`sessionGap`), by count, or by time and count.
@_spi(Components) public struct WindowShape: Sendable {
    /// The length of a time window.
    public let every: RxTimeInterval?
    /// How many elements close a window.
    public let count: Int?
    /// With `every`: how often a window starts, so windows overlap.
    public let slide: RxTimeInterval?
    /// A session window: it closes this long after its latest element.
    public let sessionGap: RxTimeInterval?

    /// A shape of the given kind (the component validates the combinations).
    public init(every: RxTimeInterval?, count: Int?, slide: RxTimeInterval?, sessionGap: RxTimeInterval?) {
        self.every = every
        self.count = count
        self.slide = slide
        self.sessionGap = sessionGap
    }
}

/// Late elements on event time: how long a time window stays open to them after it was emitted,
/// and the time of the element being delivered when it is behind the watermark.
@_spi(Components) public struct WindowLateness {
    /// How long after its end an emitted window still takes a late element.
    public let allowed: RxTimeInterval
    /// The time of the element being delivered, if it is late; nil for one on time.
    public let lateTime: () -> RxTime?

    /// Late elements joining windows up to `allowed` after their end.
    public init(allowed: RxTimeInterval, lateTime: @escaping () -> RxTime?) {
        self.allowed = allowed
        self.lateTime = lateTime
    }
}

extension ObservableType where Element: StateRepresentable {
    /// Collects the elements into windows of `shape` and emits each window's list when it closes
    /// (an empty window is not emitted). With `every`, window k covers [origin + k·every, origin
    /// + (k+1)·every), the origin being the subscription's time, or the epoch on an event-time
    /// clock; an element on a boundary belongs to the window that starts there. On completion
    /// the open windows are emitted, oldest first; an error discards them. A list goes out on
    /// behalf of every message it holds. With `lateness`, an element behind the watermark joins
    /// each window of its time emitted less than `allowed` ago, which is emitted again whole.
    /// With `state`, a checkpoint keeps the open and emitted windows and the time each has left.
    @_spi(Components) public func buffer(
        _ shape: WindowShape, scheduler: any SchedulerType, lateness: WindowLateness? = nil,
        state: OperatorState<Element>? = nil
    ) -> Observable<[Element]> {
        windowLists(shape, scheduler: scheduler, lateness: lateness, state: state, runs: nil)
    }

    /// `buffer(_:scheduler:lateness:state:)` whose lists each go through `chain` as a stream of
    /// their elements, the chains' outputs merged (`flatMap`, so each keeps its window's messages
    /// open until it is done). The result completes once the source and every chain have. With
    /// `state`, a checkpoint also keeps the lists whose chains were still running; restored,
    /// they run again first (at-least-once for the chains' output).
    @_spi(Components) public func buffer<Output>(
        _ shape: WindowShape, scheduler: any SchedulerType, lateness: WindowLateness? = nil,
        state: OperatorState<Element>? = nil, through chain: @escaping (Observable<Element>) -> Observable<Output>
    ) -> Observable<Output> {
        let source = asObservable()
        return Observable.deferred {
            let runs = WindowRuns<Element>()
            return source.windowLists(shape, scheduler: scheduler, lateness: lateness, state: state, runs: runs)
                .flatMap { items in runs.run(items, through: chain) }
        }
    }

    func windowLists(
        _ shape: WindowShape, scheduler: any SchedulerType, lateness: WindowLateness?,
        state: OperatorState<Element>?, runs: WindowRuns<Element>?
    ) -> Observable<[Element]> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = WindowListSink(
                shape: shape, scheduler: scheduler, lateness: lateness, runs: runs, downstream: observer,
                lifetime: lifetime)
            if let state { sink.keep(in: state) }
            if sink.isDisposed { return }
            source.subscribe(AnyObserver(sink.on), in: sink.sourceLifetime)
        }
    }
}

/// The chains of one subscription's windows still running: what each was given, with its message,
/// so a checkpoint keeps them to run again after a restart; and who to tell when the last is done.
final class WindowRuns<Element> {
    private var inputs: [Int: (items: [Element], origin: Origin?)] = [:]
    private var nextInput = 0
    /// Called when no chain runs any more.
    var idle: (() -> Void)?

    /// `chain` over `items`, on behalf of the current message, kept until it completes.
    func run<Output>(_ items: [Element], through chain: (Observable<Element>) -> Observable<Output>)
        -> Observable<Output>
    {
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
    var running: [[Element]] { inputs.keys.sorted().compactMap { inputs[$0]?.items } }
    /// Their messages, in the same order.
    var origins: [Origin] { inputs.keys.sorted().compactMap { inputs[$0]?.origin } }
}

/// The sink of `buffer` with a `WindowShape`: its windows and the timer set for the earliest one's
/// end. With chains (`runs`), it completes only once every window's chain has, so the state read
/// at the end finds none still running.
final class WindowListSink<Element: StateRepresentable>: Sink<[Element]> {
    let scheduler: any SchedulerType
    let lateness: WindowLateness?
    let windows: Windows<Element>
    let timer = SerialDisposable()
    let runs: WindowRuns<Element>?
    /// The window end the timer is set for: set again only when that changes.
    var armedFor: RxTime?
    /// The source's subscription, let go of when the source completes (chains may run on).
    let sourceLifetime: Lifetime

    init(
        shape: WindowShape, scheduler: any SchedulerType, lateness: WindowLateness?, runs: WindowRuns<Element>?,
        downstream: AnyObserver<[Element]>, lifetime: Lifetime
    ) {
        self.scheduler = scheduler
        self.lateness = lateness
        self.runs = runs
        // On event time windows are aligned to the epoch, not to where reading started.
        windows = Windows(shape: shape, origin: scheduler is EventTimeScheduler ? .zero : scheduler.now)
        sourceLifetime = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
        lifetime.add(timer)
    }

    func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            if let lateness, let late = lateness.lateTime() {
                // Behind the watermark, within the lateness allowed: the windows of its time.
                emitLists(
                    windows.addLate(
                        element, at: late, now: scheduler.now, allowing: lateness.allowed, origin: Origin.current))
            } else {
                emit(windows.add(element, at: scheduler.now, origin: Origin.current))
            }
            arm()
        case .error(let error):
            forwardTerminal(.error(error))
        case .completed:
            sourceLifetime.dispose()
            emit(windows.closeAll())
            guard let runs, !runs.isIdle else { return forwardTerminal(.completed) }
            // Held strongly: the source, which held this sink, has been let go of.
            runs.idle = {
                runs.idle = nil
                self.forwardTerminal(.completed)
            }
            lifetime.onDispose { runs.idle = nil }
        }
    }

    /// Takes what `state` restored (its windows, and the lists whose chains run again first) and
    /// registers how a checkpoint reads this subscription.
    func keep(in state: OperatorState<Element>) {
        if let restored = state.takeRestored() {
            let rerun = windows.restore(restored, now: scheduler.now)
            if runs != nil { for items in rerun { Origin.with(nil) { forward(.next(items)) } } }
            arm()
        }
        state.keep(
            { [windows, runs, scheduler] in windows.saved(now: scheduler.now, running: runs?.running ?? []) },
            origins: { [windows, runs] in windows.open.flatMap(\.origins) + (runs?.origins ?? []) }, until: lifetime)
    }

    func emit(_ closed: [Windows<Element>.Window]) {
        if let lateness { windows.keep(closed, now: scheduler.now, for: lateness.allowed) }
        emitLists(closed)
    }

    func emitLists(_ closed: [Windows<Element>.Window]) {
        for window in closed where !window.items.isEmpty {
            // A window goes out on behalf of every message it holds.
            Origin.with(Origin.joining(window.origins)) { forward(.next(window.items)) }
        }
    }

    /// Sets the timer for the earliest window's end, unless it is set for it already.
    func arm() {
        guard let due = windows.nextEnd, due != armedFor else { return }
        armedFor = due
        // The timer works for no message of its own: the windows carry their elements'.
        timer.disposable = Origin.with(nil) {
            scheduler.schedule(after: max(.zero, due - scheduler.now)) { [weak self] in
                guard let self, !self.isDisposed else { return }
                armedFor = nil
                emit(windows.close(upTo: scheduler.now))
                arm()
            }
        }
    }
}
