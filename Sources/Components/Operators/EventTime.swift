@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let time = Parameter<Expression>(
        "time", doc: "The element's time: milliseconds since the epoch, or RFC 3339 text.",
        example: "parseTime(.ts)")
    static let maxDelay = Parameter<RxTimeInterval>(
        "maxDelay", default: .zero,
        doc: "How far out of order elements may come: the watermark is the latest time seen minus this.",
        example: "10s"
    ).atLeast(RxTimeInterval.zero)
    static let idle = Parameter<RxTimeInterval?>(
        "idle", doc: "Wall time without input after which the stream no longer holds the watermark back.",
        example: "1m"
    ).atLeast(RxTimeInterval.clockResolution)
    static let maxAhead = Parameter<RxTimeInterval?>(
        "maxAhead",
        doc:
            "How far past the latest time taken one element may be: one further ahead waits for the next, which confirms the jump (within maxAhead of it) or not (it is then refused as late says).",
        example: "24h"
    ).atLeast(RxTimeInterval.clockResolution)
    static let late = Parameter<LateElements>(
        "late", default: .drop,
        doc: "An element behind the watermark: drop it (counted), or send it to the side stream NAME.late.")
}

/// What the reference of each timed operator says of its clock, one text for all of them.
enum ClockDocs {
    /// Timers counted from subscription (debounce, throttle, sample, buffer, delay, timeout, ...).
    static let fromSubscription = """
         Timing: on the pipeline's clock (the run's real clock; virtual in tests, or with --clock \
        virtual) its time counts from subscription; on an event-time stream (eventTime above it) it \
        runs on the watermark and counts from the first element's time minus maxDelay. On either, an \
        element and a timer of the same millisecond run element first (RxSwift's order).
        """
    /// Windows aligned to the epoch on event time (window, aggregate).
    static let alignedToTheEpoch = """
         Timing: on the pipeline's clock (the run's real clock; virtual in tests) windows are aligned \
        to the subscription (RxSwift's timing); on an event-time stream (eventTime above it) they are \
        aligned to the epoch — a 1m window is a minute of the calendar — so a resumed run, a partition \
        taken over or a replay from the middle gets the same windows whatever element it read first; \
        a window closes when the watermark passes its end.
        """
}

/// What `eventTime` does with an element behind the watermark.
enum LateElements: String, ParameterChoice {
    /// Dropped, and counted in the run summary.
    case drop
    /// Sent to the side stream `late`.
    case side
}

extension BuiltinComponents {
    /// `eventTime: {time: EXPR, maxDelay: 10s, idle: 1m, late: drop | side}` — the operators after
    /// it run on the elements' own time.
    public static let eventTime = ComponentSpec(
        name: "eventTime",
        summary: "Runs the operators after it on the elements' own time (a watermark) instead of the run's clock.",
        docs: """
            Written as a stream's `eventTime:` (or the first operator). Each element's time is read \
            with 'time'; the watermark is the latest time seen minus 'maxDelay', and elements wait \
            until the watermark reaches their time, then go on in time order with the clock at their \
            time. So every timed operator after it — debounce, throttle, sample, buffer, delay, \
            timeout, window, aggregate (aligned to the epoch), timers inside inner streams — runs on \
            event time with its usual semantics, and a replay gives the same output at any speed. An \
            element behind the watermark is late: dropped (counted in the run summary) or, with late: \
            side, sent to the side stream NAME.late. With 'idle', a stream without input for that much \
            wall time no longer holds the watermark back, which then goes on with the wall clock (from \
            a resumed run's stored watermark when nothing has come since the run started). \
            Several event-time streams share one clock: its watermark is the lowest of those not idle \
            (so a merge waits for the slowest). The partitions a nats group runner reads are inputs of \
            their own in the same way: a partition read ahead makes none of the others late, and one \
            that has delivered nothing yet holds the watermark (give 'idle' for partitions that go quiet). \
            At the end of the input every waiting element is \
            delivered and the operators complete as usual (the clock does not run on).
            """,
        parameters: [Key.time, Key.maxDelay, Key.idle, Key.maxAhead, Key.late],
        primary: Key.time,
        example: """
            - eventTime: { time: parseTime(.ts), maxDelay: 10s, idle: 1m, late: side }
            """,
        sideStreams: ["late"],
        validate: { values, validation in
            // A time that is the same for every element (a literal) is a mistake, and one that is
            // not a time at all can be said now.
            let time = values[Key.time]
            let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 0))
            guard time.isPure, let onNull = try? time.evaluate(.null, in: scope),
                let onObject = try? time.evaluate(.object(JSONObject()), in: scope), onNull == onObject
            else { return }
            switch onNull {
            case .null: return  // a field that neither element has: it reads the element
            case .int, .double:
                validation.error(
                    "'time' is the same for every element", at: Key.time, in: values,
                    note: "give the element's own time, such as .ts or parseTime(.time)")
            case .string(let text) where ExpressionEnvironment.epoch(rfc3339: text) != nil:
                validation.error(
                    "'time' is the same for every element", at: Key.time, in: values,
                    note: "give the element's own time, such as .ts or parseTime(.time)")
            default:
                validation.error(
                    "'time' gives \(onNull.typeName) \(onNull), not a time", at: Key.time, in: values,
                    note: "milliseconds since the epoch, or RFC 3339 text; parseTime() reads other forms")
            }
        },
        checkpointing: .keepsState(
            "the watermark, the latest time seen and the elements waiting for the watermark (with their messages)"),
        elementErrors: true,
        factory: .operator { parameters, context in
            let time = parameters[Key.time]
            let maxDelay = parameters[Key.maxDelay].totalNanoseconds / 1_000_000
            let idle = parameters[Key.idle]
            let late = parameters[Key.late]
            let maxAhead = parameters[Key.maxAhead].map { $0.totalNanoseconds / 1_000_000 }
            let wall = context.scheduler
            let domain = context.shared(EventTimeDomain.self) { EventTimeDomain(base: wall) }
            let partitionWatermarks = context.shared(PartitionWatermarks.self) { PartitionWatermarks() }
            // The clock is set before any operator after this one subscribes (and restores its timers).
            if let saved = context.checkpoints?.restored[context.checkpointKey], let clock = saved["clock"]?.intValue {
                if !domain.clock.isStarted { domain.clock.restore(clock: Int64(clock)) }
            }
            context.clockAfter = domain.clock
            let offer = EventTimeDomain.Offer(domain: domain)
            context.handOn = offer
            let state = context.operatorState()
            let settings = EventTimeSettings(
                time: time, maxDelay: maxDelay, idle: idle, late: late, maxAhead: maxAhead, domain: domain,
                partitionWatermarks: partitionWatermarks, offer: offer)
            return { [weak state] source in
                Observable { observer, lifetime in
                    EventTimeSink(settings: settings, context: context, observer: observer, lifetime: lifetime)
                        .run(source, state: state)
                }
            }
        }
    ).keepingState(of: [Key.maxDelay]).declaring { traits in
        // Each partition keeps a watermark of its own, from its own elements (a group's partition
        // carries its event time with it to its next runner).
        traits.partitioning = { _ in .anyKey }
        traits.startsEventTime = true
    }

    /// What a checkpoint keeps of an `eventTime` subscription: the elements waiting in its own
    /// input and in its lanes', in time order. (Lanes are not kept: a restored run opens its own.)
    static func eventTimeState(domain: EventTimeDomain, inputs: EventTimeInputs, held: [AheadGuard.Held] = [])
        -> Value
    {
        var waiting: [Value] = []
        // A candidate of maxAhead is kept with them: restored, it goes on as they do.
        let entries =
            inputs.all.flatMap { domain.waitingElements(of: $0) }
            + held.map { (time: $0.time, element: $0.element, origin: $0.origin) }
        for entry in entries.sorted(by: { $0.time < $1.time }) {
            var object = JSONObject()
            object["time"] = .int(Int(entry.time))
            object["element"] = entry.element
            waiting.append(.object(object))
        }
        var latest = Value.null
        if let seen = inputs.base.latest { latest = .int(Int(seen)) }
        var state = JSONObject()
        state["clock"] = .int(Int(domain.clock.clock))
        state["latest"] = latest
        state["waiting"] = .array(waiting)
        return .object(state)
    }

    /// An element's time as `time` gave it: milliseconds, or RFC 3339 text.
    static func eventTimeMilliseconds(_ value: Value, element: Value, context: ComponentContext) throws -> Int64 {
        switch value {
        case .int(let milliseconds) where milliseconds.magnitude < 1_000_000_000_000_000:
            return Int64(milliseconds)
        case .double(let milliseconds) where milliseconds.isFinite && milliseconds.magnitude < 1e15:
            return Int64(milliseconds.rounded(.down))
        case .string(let text):
            if let epoch = ExpressionEnvironment.epoch(rfc3339: text) { return epoch.totalNanoseconds / 1_000_000 }
        default: break
        }
        throw context.error(
            "eventTime: 'time' gave \(value.typeName) \(value), not a time (milliseconds since the epoch, or RFC 3339 "
                + "text; parseTime() reads other forms)", element: element)
    }
}

/// What every subscription of one `eventTime` shares: its parameters and the clock's domain.
private struct EventTimeSettings {
    let time: Expression
    /// In milliseconds, as the domain counts.
    let maxDelay: Int64
    let idle: RxTimeInterval?
    let late: LateElements
    let maxAhead: Int64?
    let domain: EventTimeDomain
    let partitionWatermarks: PartitionWatermarks
    let offer: EventTimeDomain.Offer
}

/// One subscription of `eventTime`: its inputs in the clock's domain (its own, and one a lane of
/// a group's partitions), their idle timers and `maxAhead` guards, and what becomes of an element
/// the domain does not take.
private final class EventTimeSink {
    private let settings: EventTimeSettings
    private let context: ComponentContext
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private let scope: EvaluationScope
    private let base: EventTimeDomain.Input
    private let inputs: EventTimeInputs
    private let idleTimers: IdleTimers
    /// With maxAhead: each input's guard against one element far ahead of the others.
    private var guards: [ObjectIdentifier: AheadGuard] = [:]
    private var saidAhead = false
    private var domain: EventTimeDomain { settings.domain }

    init(settings: EventTimeSettings, context: ComponentContext, observer: AnyObserver<Value>, lifetime: Lifetime) {
        self.settings = settings
        self.context = context
        self.observer = observer
        self.lifetime = lifetime
        scope = context.makeScope()
        let (domain, wall, maxDelay, offer) = (settings.domain, context.scheduler, settings.maxDelay, settings.offer)
        func makeInput() -> EventTimeDomain.Input {
            let input = EventTimeDomain.Input(maxDelay: maxDelay) { observer.on(.next($0)) }
            input.asTheyCome = offer.isTaken
            return input
        }
        base = makeInput()
        // No weak reference to the input: one would move every retain of it (one per waiting
        // element) onto the runtime's slow path.
        base.ended = {
            guard !lifetime.isDisposed else { return }
            observer.on(.completed)
            lifetime.dispose()
        }
        domain.add(base)
        let idleTimers = IdleTimers(domain: domain, wall: wall, idle: settings.idle, lifetime: lifetime)
        self.idleTimers = idleTimers
        // A group's partitions: their watermarks published for the runner's lease entry every
        // second, from the first partition seen (nothing else needs it).
        let published = SerialDisposable()
        lifetime.add(published)
        weak var inputsMade: EventTimeInputs?
        let partitionWatermarks = settings.partitionWatermarks
        func madeLaneInput(_ input: EventTimeDomain.Input) {
            idleTimers.arm(input)
            guard published.disposable == nil else { return }
            published.disposable = Origin.with(nil) {
                wall.schedulePeriodic(startAfter: .zero, period: .seconds(1)) {
                    partitionWatermarks.publish(
                        (inputsMade?.all ?? []).compactMap { input in input.lane.map { ($0, input.watermark) } })
                }
            }
        }
        inputs = EventTimeInputs(
            domain: domain, base: base, makeInput: makeInput, madeLaneInput: madeLaneInput,
            laneInputLeft: idleTimers.forget, seenLanesOnly: context.existing(SeenLanesOnly.self) != nil)
        inputsMade = inputs
        lifetime.onDispose { [inputs, base] in
            inputs.remove()
            domain.remove(base)
        }
    }

    /// Restores and keeps what waits (when the run keeps state), starts the gauges, and reads
    /// `source` at once: a partition's lane or an inner stream is hot, and what it delivers before
    /// this subscribes would be lost. (Deferring the read until the pipeline is subscribed, so that
    /// a file read while subscribed comes after sample's ticks are armed, lost a takeover's first
    /// messages in a group: a file is read at the next turn instead, `subscribedAtNextTurn`.)
    func run(_ source: Observable<Value>, state: OperatorState<Value>?) {
        if let state { keep(in: state) }
        idleTimers.arm(base)
        if let meter = context.meter {
            EventTimeGauges(
                meter: meter, domain: domain, inputs: inputs,
                ownWatermark: context.existing(SeenLanesOnly.self) == nil,
                wallEpoch: context.environment.epoch, wall: context.scheduler
            ).start(until: lifetime)
        }
        readEach(
            source, while: lifetime, in: lifetime.makeChild(), routing: context,
            element: { [self] element in
                if let at = try lateTime(of: element) { notTaken(element, at: at) }
            },
            failed: { [observer, lifetime] in
                observer.on(.error($0))
                lifetime.dispose()
            },
            completed: { [self] in
                idleTimers.stop()
                // Nothing came to refuse a candidate: it goes on.
                for input in inputs.all {
                    if let held = guards[ObjectIdentifier(input)]?.end() { takeHeld(held, into: input) }
                }
                inputs.endLanes()
                domain.end(base)
            })
    }

    private func keep(in state: OperatorState<Value>) {
        if let restored = state.takeRestored() {
            base.latest = restored["latest"]?.intValue.map(Int64.init)
            for entry in restored["waiting"]?.arrayValue ?? [] {
                guard let at = entry["time"]?.intValue, let element = entry["element"] else { continue }
                _ = Origin.with(nil) { domain.take(element, at: Int64(at), from: base) }
            }
        }
        state.keep(
            { [self] in
                BuiltinComponents.eventTimeState(
                    domain: domain, inputs: inputs, held: guards.values.compactMap(\.candidate))
            },
            origins: { [self] in
                inputs.all.flatMap { domain.waitingElements(of: $0) }.compactMap(\.origin)
                    + guards.values.compactMap { $0.candidate?.origin }
            },
            until: lifetime)
    }

    /// Gives `element` to the domain by its input; the time of an element it did not take (late),
    /// else nil.
    @inline(__always)
    private func lateTime(of element: Value) throws -> Int64? {
        try inputs.withInput { input -> Int64? in
            idleTimers.arm(input)
            // Most times are plain integers in the line: read in place, no scope or Value.
            let at =
                try settings.time.fieldInteger(of: element).map(Int64.init)
                ?? BuiltinComponents.eventTimeMilliseconds(
                    context.evaluate(settings.time, element, in: scope), element: element, context: context)
            if let maxAhead = settings.maxAhead, !passesGuard(element, at: at, into: input, maxAhead: maxAhead) {
                return nil
            }
            return domain.take(element, at: at, from: input) ? nil : at
        }
    }

    /// With maxAhead: settles the candidate the input's guard held before `element` and says
    /// whether `element` is taken now (else it is held as the next candidate).
    private func passesGuard(_ element: Value, at: Int64, into input: EventTimeDomain.Input, maxAhead: Int64) -> Bool {
        let key = ObjectIdentifier(input)
        let guardian =
            guards[key]
            ?? {
                let made = AheadGuard(maxAhead: maxAhead, latest: input.latest)
                guards[key] = made
                return made
            }()
        let (before, takeNow) = guardian.consider(element, at: at, origin: Origin.current)
        switch before {
        case .confirmed(let held)?: takeHeld(held, into: input)
        case .refused(let held)?:
            Origin.with(held.origin) { notTaken(held.element, at: held.time, ahead: input.latest ?? at) }
        case nil: break
        }
        return takeNow
    }

    /// Takes a candidate the next element confirmed, or the end let go on.
    private func takeHeld(_ held: AheadGuard.Held, into input: EventTimeDomain.Input) {
        Origin.with(held.origin) {
            if !domain.take(held.element, at: held.time, from: input) { notTaken(held.element, at: held.time) }
        }
    }

    /// An element behind the watermark, or refused as ahead: dropped and counted, or sent to the
    /// side stream, as `late` says.
    private func notTaken(_ element: Value, at: Int64, ahead: Int64? = nil) {
        let shown = { (time: Int64) in ExpressionEnvironment.rfc3339(epochMilliseconds: Int(time)) }
        if let ahead {
            context.meter?.count("elements_ahead_total")
            let message =
                "time \(shown(at)) more than maxAhead past the latest time taken, \(shown(ahead)), and the "
                + "next element did not follow it there"
            if !saidAhead {
                // Said as it happens (the summary counts them at the end).
                saidAhead = true
                context.log("eventTime refused an element: \(message)", level: .warning)
            }
            switch settings.late {
            case .drop: context.dropped(reason: "far ahead of the others (maxAhead)", message: message)
            case .side: context.sideStreams["late"]?.onNext(element)
            }
            return
        }
        context.meter?.count("elements_late_total")
        switch settings.late {
        case .drop:
            context.dropped(
                reason: "late, behind the watermark (late: drop)",
                message: "time \(shown(at)) behind the watermark \(shown(domain.clock.clock))")
        case .side: context.sideStreams["late"]?.onNext(element)
        }
    }
}

/// `idle` for each input of an `eventTime` subscription: after that much wall time without an
/// element, the input no longer holds the watermark back, which then goes on with the wall clock.
private final class IdleTimers {
    private let domain: EventTimeDomain
    private let wall: any SchedulerType
    private let idle: RxTimeInterval?
    private let lifetime: Lifetime
    private var timers: [ObjectIdentifier: SerialDisposable] = [:]

    init(domain: EventTimeDomain, wall: any SchedulerType, idle: RxTimeInterval?, lifetime: Lifetime) {
        self.domain = domain
        self.wall = wall
        self.idle = idle
        self.lifetime = lifetime
    }

    /// `input` took an element (or began): its idle time starts again.
    func arm(_ input: EventTimeDomain.Input) {
        guard let idle else { return }
        let wall = wall
        timer(of: input).disposable = Origin.with(nil) {
            wall.schedule(after: idle) { [weak self] in self?.follow(input, since: wall.now - idle) }
        }
    }

    /// Idle: the watermark goes on with the wall clock, to the next work due.
    private func follow(_ input: EventTimeDomain.Input, since lastInput: RxTime) {
        guard !lifetime.isDisposed, !input.hasEnded else { return }
        domain.idle(input, quietFor: (wall.now - lastInput).totalNanoseconds / 1_000_000)
        guard let due = domain.clock.nextDue, let mark = input.idleMark else { return }
        timer(of: input).disposable = Origin.with(nil) {
            wall.schedule(after: .milliseconds(max(1, due - mark))) { [weak self] in
                self?.follow(input, since: lastInput)
            }
        }
    }

    private func timer(of input: EventTimeDomain.Input) -> SerialDisposable {
        if let timer = timers[ObjectIdentifier(input)] { return timer }
        let timer = SerialDisposable()
        timers[ObjectIdentifier(input)] = timer
        lifetime.add(timer)
        return timer
    }

    /// A lane's input left: its timer goes.
    func forget(_ input: EventTimeDomain.Input) {
        timers.removeValue(forKey: ObjectIdentifier(input))?.dispose()
    }

    /// The source ended: no timer is needed any more.
    func stop() {
        for timer in timers.values { timer.dispose() }
    }
}

/// What a watched run (`--metrics`, `top`) shows of an `eventTime`, every second on the run's
/// clock: the watermark, how far it is behind the wall clock, how many elements wait for it, and
/// for a source read by partitions (a runner group) each partition's own, so that the one holding
/// the stream's back can be seen (quiet, taken over, behind).
private struct EventTimeGauges {
    let meter: ComponentMeter
    let domain: EventTimeDomain
    let inputs: EventTimeInputs
    /// Whether the stream's watermark is this subscription's to show (a group's partition chain
    /// shows only its partition's: every chain of a `partitionBy` counts on its row).
    let ownWatermark: Bool
    let wallEpoch: RxTime
    let wall: any SchedulerType

    func start(until lifetime: Lifetime) {
        let timer = Origin.with(nil) {
            wall.schedulePeriodic(startAfter: .zero, period: .seconds(1)) { [self] in measure() }
        }
        lifetime.add(timer)
    }

    private func measure() {
        let wallNow = (wallEpoch + wall.now).milliseconds
        if ownWatermark {
            let mark = domain.clock.isStarted ? domain.clock.clock : nil
            meter.gauge("watermark_ms", Int(mark ?? 0))
            meter.gauge("watermark_behind_ms", mark.map { Int(max(0, wallNow - $0)) } ?? 0)
            meter.gauge("event_time_waiting", inputs.all.reduce(0) { $0 + $1.waiting })
            let held = domain.held
            meter.gauge("event_time_windows_open", held.windows)
            meter.gauge("event_time_keys_held", held.keys)
        }
        for input in inputs.all {
            guard let lane = input.lane else { continue }
            let label = ("partition", String(lane))
            meter.gauge("partition_watermark_ms", label: label, Int(input.watermark ?? 0))
            meter.gauge(
                "partition_watermark_behind_ms", label: label, input.watermark.map { Int(max(0, wallNow - $0)) } ?? 0)
            meter.gauge("partition_idle", label: label, input.isIdle ? 1 : 0)
        }
    }
}
