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
            let rules = EventTimeRules(
                maxDelay: parameters[Key.maxDelay].totalNanoseconds / 1_000_000, idle: parameters[Key.idle],
                maxAhead: parameters[Key.maxAhead].map { $0.totalNanoseconds / 1_000_000 },
                seenLanesOnly: context.existing(SeenLanesOnly.self) != nil)
            let wall = context.scheduler
            let domain = context.shared(EventTimeDomain<Value>.self) { EventTimeDomain(base: wall) }
            let partitionWatermarks = context.shared(PartitionWatermarks.self) { PartitionWatermarks() }
            // The clock is set before any operator after this one subscribes (and restores its timers).
            if let saved = context.checkpoints?.restored[context.checkpointKey], let clock = saved["clock"]?.intValue {
                if !domain.clock.isStarted { domain.clock.restore(clock: Int64(clock)) }
            }
            context.clockAfter = domain.clock
            let offer = EventTimeOffer(domain: domain)
            context.handOn = offer
            let state = context.operatorState()
            let refusals = EventTimeRefusals(context: context, late: parameters[Key.late], domain: domain)
            let watch = EventTimeWatch<Value>(
                subscribed: context.meter.map { meter in
                    { inputs, lifetime in
                        EventTimeGauges(
                            meter: meter, domain: domain, inputs: inputs,
                            ownWatermark: context.existing(SeenLanesOnly.self) == nil,
                            wallEpoch: context.environment.epoch, wall: wall
                        ).start(until: lifetime)
                    }
                }, lanes: partitionWatermarks.publish)
            return { [weak state] source in
                let scope = context.makeScope()
                return source.eventTime(
                    on: domain, wall: wall, rules: rules, asTheyCome: { offer.isTaken },
                    time: { element in
                        do {
                            // Most times are plain integers in the line: read in place, no scope or Value.
                            if let milliseconds = time.fieldInteger(of: element) { return Int64(milliseconds) }
                            return try BuiltinComponents.eventTimeMilliseconds(
                                context.evaluate(time, element, in: scope), element: element, context: context)
                        } catch {
                            // Dropped as onError says (nil), or the run fails.
                            try context.elementFailed(error, element: element)
                            return nil
                        }
                    }, refused: refusals.refuse, watch: watch, state: state)
            }
        }
    ).keepingState(of: [Key.maxDelay]).declaring { traits in
        // Each partition keeps a watermark of its own, from its own elements (a group's partition
        // carries its event time with it to its next runner).
        traits.partitioning = { _ in .anyKey }
        traits.startsEventTime = true
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

/// Found by an `eventTime` in a group's partition chain: the chain gets the elements of its own
/// partition's lane only, so only the lanes it gets elements from hold its watermark back.
final class SeenLanesOnly {}

/// What `eventTime` does with an element it did not take: late (behind the watermark) or refused
/// as far ahead: dropped and counted, or sent to the side stream, as `late` says.
private final class EventTimeRefusals {
    private let context: ComponentContext
    private let late: LateElements
    private let domain: EventTimeDomain<Value>
    private var saidAhead = false

    init(context: ComponentContext, late: LateElements, domain: EventTimeDomain<Value>) {
        self.context = context
        self.late = late
        self.domain = domain
    }

    func refuse(_ element: Value, _ refusal: EventTimeRefusal) {
        let shown = { (time: Int64) in ExpressionEnvironment.rfc3339(epochMilliseconds: Int(time)) }
        switch refusal {
        case .ahead(let at, let latest):
            context.meter?.count("elements_ahead_total")
            let message =
                "time \(shown(at)) more than maxAhead past the latest time taken, \(shown(latest)), and the "
                + "next element did not follow it there"
            if !saidAhead {
                // Said as it happens (the summary counts them at the end).
                saidAhead = true
                context.log("eventTime refused an element: \(message)", level: .warning)
            }
            switch late {
            case .drop: context.dropped(reason: "far ahead of the others (maxAhead)", message: message)
            case .side: context.sideStreams["late"]?.onNext(element)
            }
        case .late(let at):
            context.meter?.count("elements_late_total")
            switch late {
            case .drop:
                context.dropped(
                    reason: "late, behind the watermark (late: drop)",
                    message: "time \(shown(at)) behind the watermark \(shown(domain.clock.clock))")
            case .side: context.sideStreams["late"]?.onNext(element)
            }
        }
    }
}

/// What a watched run (`--metrics`, `top`) shows of an `eventTime`, every second on the run's
/// clock: the watermark, how far it is behind the wall clock, how many elements wait for it, and
/// for a source read by partitions (a runner group) each partition's own, so that the one holding
/// the stream's back can be seen (quiet, taken over, behind).
private struct EventTimeGauges {
    let meter: ComponentMeter
    let domain: EventTimeDomain<Value>
    let inputs: EventTimeInputs<Value>
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
