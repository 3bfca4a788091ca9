/// How `eventTime` reads its stream: how far out of order elements may come, when a quiet input
/// stops holding the watermark back, and how far ahead one element may jump.
@_spi(Components) public struct EventTimeRules: Sendable {
    /// How far out of order elements may come (ms): an input's watermark is its latest time less this.
    public let maxDelay: Int64
    /// Wall time without input after which an input no longer holds the watermark back.
    public let idle: RxTimeInterval?
    /// How far past the latest time taken one element may be (ms) before the next must confirm it.
    public let maxAhead: Int64?
    /// Whether only the lanes elements come by are inputs (a group's partition chain, which gets
    /// its own lane's elements only), rather than every open lane of their source.
    public let seenLanesOnly: Bool

    /// Rules with these bounds.
    public init(maxDelay: Int64, idle: RxTimeInterval?, maxAhead: Int64?, seenLanesOnly: Bool) {
        self.maxDelay = maxDelay
        self.idle = idle
        self.maxAhead = maxAhead
        self.seenLanesOnly = seenLanesOnly
    }
}

/// Why `eventTime` did not take an element.
@_spi(Components) public enum EventTimeRefusal: Equatable, Sendable {
    /// Its time is behind the watermark (beyond the domain's `allowedLateness`).
    case late(at: Int64)
    /// Its time was more than `maxAhead` past `latest`, the latest time taken, and the next
    /// element did not follow it there.
    case ahead(at: Int64, latest: Int64)
}

/// What a subscription of `eventTime` lets its host see: its inputs (its own, and one per lane),
/// for gauges, until `lifetime` ends; and each second, from its first lane on, the watermark of
/// every lane it reads.
@_spi(Components) public struct EventTimeWatch<Element> {
    /// Called at subscription, before the source is read.
    public let subscribed: ((EventTimeInputs<Element>, Lifetime) -> Void)?
    /// Each lane's watermark (nil before its first element), every second on the wall clock.
    public let lanes: (([(partition: Int, watermark: Int64?)]) -> Void)?

    /// A watch calling these.
    public init(
        subscribed: ((EventTimeInputs<Element>, Lifetime) -> Void)? = nil,
        lanes: (([(partition: Int, watermark: Int64?)]) -> Void)? = nil
    ) {
        self.subscribed = subscribed
        self.lanes = lanes
    }
}

extension ObservableType where Element: StateRepresentable {
    /// Runs what follows on the elements' own time: each element's time (ms since the epoch) is
    /// read with `time` (nil: the element is dropped, its error already handled), and it is given
    /// to `domain`, which delivers it once the watermark — the latest time seen less `maxDelay`,
    /// the lowest over the domain's inputs — reaches it, in time order, with `domain.clock` at its
    /// time (or at once with its time in `domain.elementTime`, if `asTheyCome` says the operator
    /// after takes elements so). An element behind the watermark, or refused by `maxAhead`, goes
    /// to `refused`. Elements that come by a lane (their origin a `LanedOrigin`) are inputs of
    /// their lane, so a lane read ahead makes none of the others late. At completion what waits
    /// is delivered, then the result completes; an error of the source or of `time` ends it at
    /// once. With `state`, a checkpoint keeps the latest time and what waits; the clock itself is
    /// the host's to restore before subscription (it is shared).
    ///
    /// Inlined so that the events' and elements' types are known where they are made and taken
    /// apart (unspecialised, each costs a type lookup per element); the work is the sink's.
    @_spi(Components) @inlinable public func eventTime(
        on domain: EventTimeDomain<Element>, wall: any SchedulerType, rules: EventTimeRules,
        asTheyCome: @escaping () -> Bool, time: @escaping (Element) throws -> Int64?,
        refused: @escaping (Element, EventTimeRefusal) -> Void, watch: EventTimeWatch<Element> = EventTimeWatch(),
        state: OperatorState<Element>? = nil
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let feed = EventTimeFeed(
                domain: domain, wall: wall, rules: rules, asTheyCome: asTheyCome(), time: time, refused: refused,
                watch: watch, state: state, deliver: { observer.on(.next($0)) }, forward: { observer.on($0) },
                downstream: observer, lifetime: lifetime)
            // Read at once: a partition's lane or an inner stream is hot, and what it delivers
            // before this subscribes would be lost.
            source.subscribe(feeding: feed, in: lifetime.makeChild())
        }
    }
}

/// What `eventTime`'s inlined entry point sees of its sink: three calls. (Not for use elsewhere.)
@_spi(Components) public final class EventTimeFeed<Element: StateRepresentable>: ElementFeed {
    private let sink: EventTimeSink<Element>

    /// The sink of one subscription, restored from `state` and started.
    public init(
        domain: EventTimeDomain<Element>, wall: any SchedulerType, rules: EventTimeRules, asTheyCome: Bool,
        time: @escaping (Element) throws -> Int64?, refused: @escaping (Element, EventTimeRefusal) -> Void,
        watch: EventTimeWatch<Element>, state: OperatorState<Element>?, deliver: @escaping (Element) -> Void,
        forward: @escaping (Event<Element>) -> Void, downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        sink = EventTimeSink(
            domain: domain, wall: wall, rules: rules, asTheyCome: asTheyCome, time: time, refused: refused,
            lanes: watch.lanes, deliver: deliver, forward: forward, downstream: downstream, lifetime: lifetime)
        if let state { sink.keep(in: state) }
        sink.start()
        watch.subscribed?(sink.inputs, lifetime)
    }

    /// The source's next element.
    public func take(_ element: Element) { sink.take(element, in: .next(element)) }
    /// The source's next element, with its event (passed on as it is when the element goes on at once).
    public func take(_ element: Element, in event: Event<Element>) { sink.take(element, in: event) }
    /// The source failed.
    public func fail(_ error: any Error) { sink.fail(error) }
    /// The source completed.
    public func complete() { sink.complete() }
}

/// The sink of `eventTime`: its inputs in the domain (its own, and one per lane), their idle
/// timers and `maxAhead` guards, and what becomes of an element the domain does not take.
final class EventTimeSink<Element: StateRepresentable>: Sink<Element> {
    typealias Input = EventTimeDomain<Element>.Input
    let domain: EventTimeDomain<Element>
    let rules: EventTimeRules
    let time: (Element) throws -> Int64?
    let refused: (Element, EventTimeRefusal) -> Void
    let base: Input
    let inputs: EventTimeInputs<Element>
    let idleTimers: IdleTimers<Element>
    /// With maxAhead: each input's guard against one element far ahead of the others.
    var guards: [ObjectIdentifier: AheadGuard<Element>] = [:]

    init(
        domain: EventTimeDomain<Element>, wall: any SchedulerType, rules: EventTimeRules, asTheyCome: Bool,
        time: @escaping (Element) throws -> Int64?, refused: @escaping (Element, EventTimeRefusal) -> Void,
        lanes: (([(partition: Int, watermark: Int64?)]) -> Void)?, deliver: @escaping (Element) -> Void,
        forward: @escaping (Event<Element>) -> Void, downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.domain = domain
        self.rules = rules
        self.time = time
        self.refused = refused
        func makeInput() -> Input {
            let input = Input(maxDelay: rules.maxDelay, deliver: deliver, forward: forward)
            input.asTheyCome = asTheyCome
            return input
        }
        base = makeInput()
        // No weak reference to the input: one would move every retain of it (one per waiting
        // element) onto the runtime's slow path.
        base.ended = {
            guard !lifetime.isDisposed else { return }
            downstream.on(.completed)
            lifetime.dispose()
        }
        domain.add(base)
        let idleTimers = IdleTimers(domain: domain, wall: wall, idle: rules.idle, lifetime: lifetime)
        self.idleTimers = idleTimers
        // A group's partitions: their watermarks published every second from the first lane
        // seen (nothing else needs the timer).
        let published = SerialDisposable()
        lifetime.add(published)
        weak var inputsMade: EventTimeInputs<Element>?
        func madeLaneInput(_ input: Input) {
            idleTimers.arm(input)
            guard let lanes, published.disposable == nil else { return }
            published.disposable = Origin.with(nil) {
                wall.schedulePeriodic(startAfter: .zero, period: .seconds(1)) {
                    lanes((inputsMade?.all ?? []).compactMap { input in input.lane.map { ($0, input.watermark) } })
                }
            }
        }
        inputs = EventTimeInputs(
            domain: domain, base: base, makeInput: makeInput, madeLaneInput: madeLaneInput,
            laneInputLeft: idleTimers.forget, seenLanesOnly: rules.seenLanesOnly)
        inputsMade = inputs
        super.init(downstream: downstream, lifetime: lifetime)
        lifetime.onDispose { [inputs, base] in
            inputs.remove()
            domain.remove(base)
        }
    }

    /// Arms the own input's idle timer.
    func start() { idleTimers.arm(base) }

    func take(_ element: Element, in event: Event<Element>) {
        if lifetime.isDisposed { return }  // (read from the non-generic lifetime: no call per element)
        do {
            if let at = try lateTime(of: element, in: event) { refused(element, .late(at: at)) }
        } catch {
            fail(error)
        }
    }

    /// Ends the result with `error`. (Apart from `take`: an event is of the element's type, which
    /// code not specialised for it looks up on entry, for every element.)
    @inline(never)
    func fail(_ error: any Error) {
        forwardTerminal(.error(error))
    }

    func complete() {
        if isDisposed { return }
        idleTimers.stop()
        // Nothing came to refuse a candidate: it goes on.
        for input in inputs.all {
            if let held = guards[ObjectIdentifier(input)]?.end() { takeHeld(held, into: input) }
        }
        inputs.endLanes()
        domain.end(base)
    }

    /// Restores what waited, and keeps the latest time and what waits (with the candidate of
    /// `maxAhead`, which goes on as they do) for checkpoints.
    func keep(in state: OperatorState<Element>) {
        if let restored = state.takeRestored() {
            base.latest = restored.stateField("latest")?.stateInteger.map(Int64.init)
            for entry in restored.stateField("waiting")?.stateList ?? [] {
                guard let at = entry.stateField("time")?.stateInteger, let element = entry.stateField("element")
                else { continue }
                _ = Origin.with(nil) { domain.take(element, at: Int64(at), from: base) }
            }
        }
        state.keep(
            { [self] in saved() },
            origins: { [self] in
                inputs.all.flatMap { domain.waitingElements(of: $0) }.compactMap(\.origin)
                    + guards.values.compactMap { $0.candidate?.origin }
            },
            until: lifetime)
    }

    /// `{clock, latest, waiting: [{time, element}]}`, what waits in time order; no `latest`
    /// before the first element.
    func saved() -> Element {
        let held = guards.values.compactMap(\.candidate).map { (time: $0.time, element: $0.element) }
        let entries = inputs.all.flatMap { domain.waitingElements(of: $0).map { ($0.time, $0.element) } } + held
        let waiting = entries.sorted { $0.0 < $1.0 }.map { time, element in
            Element(stateRecord: [("time", Element(stateInteger: Int(time))), ("element", element)])
        }
        var fields = [("clock", Element(stateInteger: Int(domain.clock.clock)))]
        if let latest = base.latest { fields.append(("latest", Element(stateInteger: Int(latest)))) }
        fields.append(("waiting", Element(stateList: waiting)))
        return Element(stateRecord: fields)
    }

    /// Gives `element` to the domain by its input; the time of an element it did not take (late),
    /// else nil.
    @inline(__always)
    private func lateTime(of element: Element, in event: Event<Element>) throws -> Int64? {
        try inputs.withInput { input -> Int64? in
            if rules.idle != nil { idleTimers.arm(input) }
            guard let at = try time(element) else { return nil }
            if let maxAhead = rules.maxAhead, !passesGuard(element, at: at, into: input, maxAhead: maxAhead) {
                return nil
            }
            return domain.take(element, in: event, at: at, from: input) ? nil : at
        }
    }

    /// With maxAhead: settles the candidate the input's guard held before `element` and says
    /// whether `element` is taken now (else it is held as the next candidate).
    private func passesGuard(_ element: Element, at: Int64, into input: Input, maxAhead: Int64) -> Bool {
        let key = ObjectIdentifier(input)
        let guardian =
            guards[key]
            ?? {
                let made = AheadGuard<Element>(maxAhead: maxAhead, latest: input.latest)
                guards[key] = made
                return made
            }()
        let (before, takeNow) = guardian.consider(element, at: at, origin: Origin.current)
        switch before {
        case .confirmed(let held)?: takeHeld(held, into: input)
        case .refused(let held)?:
            Origin.with(held.origin) { refused(held.element, .ahead(at: held.time, latest: input.latest ?? at)) }
        case nil: break
        }
        return takeNow
    }

    /// Takes a candidate the next element confirmed, or the end let go on.
    private func takeHeld(_ held: AheadGuard<Element>.Held, into input: Input) {
        Origin.with(held.origin) {
            if !domain.take(held.element, at: held.time, from: input) { refused(held.element, .late(at: held.time)) }
        }
    }
}

/// `idle` for each input of an `eventTime` subscription: after that much wall time without an
/// element, the input no longer holds the watermark back, which then goes on with the wall clock.
final class IdleTimers<Element> {
    typealias Input = EventTimeDomain<Element>.Input
    private let domain: EventTimeDomain<Element>
    private let wall: any SchedulerType
    private let idle: RxTimeInterval?
    private let lifetime: Lifetime
    private var timers: [ObjectIdentifier: SerialDisposable] = [:]

    init(domain: EventTimeDomain<Element>, wall: any SchedulerType, idle: RxTimeInterval?, lifetime: Lifetime) {
        self.domain = domain
        self.wall = wall
        self.idle = idle
        self.lifetime = lifetime
    }

    /// `input` took an element (or began): its idle time starts again.
    func arm(_ input: Input) {
        guard let idle else { return }
        let wall = wall
        timer(of: input).disposable = Origin.with(nil) {
            wall.schedule(after: idle) { [weak self] in self?.follow(input, since: wall.now - idle) }
        }
    }

    /// Idle: the watermark goes on with the wall clock, to the next work due.
    private func follow(_ input: Input, since lastInput: RxTime) {
        guard !lifetime.isDisposed, !input.hasEnded else { return }
        domain.idle(input, quietFor: (wall.now - lastInput).totalNanoseconds / 1_000_000)
        guard let due = domain.clock.nextDue, let mark = input.idleMark else { return }
        timer(of: input).disposable = Origin.with(nil) {
            wall.schedule(after: .milliseconds(max(1, due - mark))) { [weak self] in
                self?.follow(input, since: lastInput)
            }
        }
    }

    private func timer(of input: Input) -> SerialDisposable {
        if let timer = timers[ObjectIdentifier(input)] { return timer }
        let timer = SerialDisposable()
        timers[ObjectIdentifier(input)] = timer
        lifetime.add(timer)
        return timer
    }

    /// A lane's input left: its timer goes.
    func forget(_ input: Input) {
        timers.removeValue(forKey: ObjectIdentifier(input))?.dispose()
    }

    /// The source ended: no timer is needed any more.
    func stop() {
        for timer in timers.values { timer.dispose() }
    }
}
