/// How `aggregate` numbers its windows: tumbling windows of `every` (or one window, to the end of
/// the stream), by each element's own time (the accumulator's `time`), its event time, or the
/// clock's time.
@_spi(Components) public struct AggregateWindowing<Element> {
    /// The windows' length; nil: one window, emitted at completion.
    public let every: RxTimeInterval?
    /// On event time with late elements: the domain they come from, and how long after its end
    /// (ms) an emitted window still takes them.
    public let lateness: (domain: EventTimeDomain<Element>, allowed: Int64)?
    /// Right behind `eventTime`, the domain whose elements come as they come (each with its time).
    public let asTheyCome: EventTimeDomain<Element>?
    /// The clock windows close on.
    public let scheduler: any SchedulerType

    /// Windows of these kinds.
    public init(
        every: RxTimeInterval?,
        lateness: (domain: EventTimeDomain<Element>, allowed: Int64)?, asTheyCome: EventTimeDomain<Element>?,
        scheduler: any SchedulerType
    ) {
        self.every = every
        self.lateness = lateness
        self.asTheyCome = asTheyCome
        self.scheduler = scheduler
    }
}

/// What one subscription of `aggregate` counts its windows with: the host's tables, by window
/// number. `aggregate` decides which window an element counts in and when each closes; the
/// accumulator keeps what they hold.
@_spi(Components) public struct WindowAccumulator<Element> {
    /// Each element's own time in milliseconds (finite, within ±2^53), when elements give theirs.
    public let time: ((Element) throws -> Double)?
    /// Counts an element in window `window` (opened first if it is not), with its event time if
    /// it came with one.
    public let count: (Element, _ window: Int64, _ time: Int64?) throws -> Void
    /// Closes window `window` (starting at `start` ms, ending on the clock at `end` ms, or `.max`
    /// for the one window of a stream) and emits its results with `emit`.
    public let close: (_ window: Int64, _ start: Int64, _ end: Int64, _ emit: (Element) -> Void) -> Void
    /// Counts a late element (at `time` ms) in window `window`, emitted already, and emits that
    /// window's results again with `emit`.
    public let update: (Element, _ window: Int64, _ time: Int64, _ emit: (Element) -> Void) throws -> Void
    /// Forgets the emitted windows numbered below the one given: no late element may update them.
    public let forget: (_ before: Int64) -> Void
    /// The fields a checkpoint keeps of the windows (after `elapsed`, which is the operator's).
    public let save: () -> [(String, Element)]
    /// Goes on from a checkpoint's state; the windows it opened again, by number.
    public let restore: (Element) -> [Int64]

    /// An accumulator of these calls.
    public init(
        time: ((Element) throws -> Double)?, count: @escaping (Element, _ window: Int64, _ time: Int64?) throws -> Void,
        close: @escaping (_ window: Int64, _ start: Int64, _ end: Int64, _ emit: (Element) -> Void) -> Void,
        update: @escaping (Element, _ window: Int64, _ time: Int64, _ emit: (Element) -> Void) throws -> Void,
        forget: @escaping (_ before: Int64) -> Void, save: @escaping () -> [(String, Element)],
        restore: @escaping (Element) -> [Int64]
    ) {
        self.time = time
        self.count = count
        self.close = close
        self.update = update
        self.forget = forget
        self.save = save
        self.restore = restore
    }
}

extension ObservableType where Element: StateRepresentable {
    /// Counts each element in a tumbling window and emits each window's results when it closes.
    /// Window k covers [k·every, (k+1)·every) of the element's own `time`, of its event time
    /// (aligned to the epoch), or of the clock counted from subscription. Without `time`, a window
    /// closes when the clock passes its end (a timer; on event time, the watermark); with `time`, one
    /// window is open at a time and an element of a later window closes it (an earlier one counts in
    /// it). Elements that come as they come on event time count in the window of their own time,
    /// several windows open at once. With `lateness`, an element behind the watermark within the
    /// allowance updates its window, emitted already (`update`). Completion emits the open windows,
    /// oldest first, then completes; an error discards them. A window's results go out on behalf of
    /// every message counted in it. An element the accumulator or `time` fails on goes to
    /// `elementFailed` (nothing to rethrow: it is dropped; else the result fails).
    ///
    /// With `state`, a checkpoint keeps the time since the clock's start (`elapsed`: a resumed run
    /// goes on as if no time had passed) and what the accumulator saves.
    ///
    /// Inlined so that the events' and elements' types are known where they are taken apart
    /// (unspecialised, each costs a type lookup per element); the work is the sink's.
    @_spi(Components) @inlinable public func aggregate(
        _ windowing: AggregateWindowing<Element>, accumulator: @escaping () -> WindowAccumulator<Element>,
        elementFailed: @escaping (any Error, Element) throws -> Void, state: OperatorState<Element>? = nil
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let feed = AggregateFeed(
                windowing, accumulator: accumulator(), elementFailed: elementFailed, state: state,
                downstream: observer, lifetime: lifetime)
            source.subscribe(feeding: feed, in: lifetime.makeChild())
        }
    }
}

/// What `aggregate`'s inlined entry point sees of its sink: three calls. (Not for use elsewhere.)
@_spi(Components) public final class AggregateFeed<Element: StateRepresentable>: ElementFeed {
    private let sink: AggregateSink<Element>

    /// The sink of one subscription, restored from `state`.
    public init(
        _ windowing: AggregateWindowing<Element>, accumulator: WindowAccumulator<Element>,
        elementFailed: @escaping (any Error, Element) throws -> Void, state: OperatorState<Element>?,
        downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        sink = AggregateSink(
            windowing, accumulator: accumulator, elementFailed: elementFailed, downstream: downstream,
            lifetime: lifetime)
        if let state { sink.keep(in: state) }
    }

    /// The source's next element.
    public func take(_ element: Element) { sink.take(element) }
    /// The source failed.
    public func fail(_ error: any Error) { sink.fail(error) }
    /// The source completed.
    public func complete() { sink.complete() }
}

/// The sink of `aggregate`: which windows are open (one, or every one not closed by the watermark
/// when elements come as they come), the timer for the earliest one's end, and the messages each
/// window counted.
final class AggregateSink<Element: StateRepresentable>: Sink<Element> {
    let windowing: AggregateWindowing<Element>
    let accumulator: WindowAccumulator<Element>
    let elementFailed: (any Error, Element) throws -> Void
    /// `every` in whole milliseconds.
    let length: Int64?
    let eventClock: EventTimeScheduler?
    // Read per element: kept apart from `windowing`, as plain references (a generic optional's
    // methods, unspecialised, look its type up each time).
    let asTheyCome: EventTimeDomain<Element>?
    let lateDomain: EventTimeDomain<Element>?
    let timer = SerialDisposable()
    /// The open windows' numbers, earliest first (most of the time one or two).
    var open: [Int64] = []
    /// The window the clock is armed for.
    var armedFor: Int64?
    /// The clock's time windows are counted from (not on event time, not with `time`).
    var clockStart: RxTime { didSet { clockStartMilliseconds = clockStart.milliseconds } }
    /// `clockStart` in whole milliseconds (read per element on event time).
    var clockStartMilliseconds: Int64
    /// The origins of the elements counted in each open window.
    var held: [Int64: [Origin]] = [:]
    /// The window the last element counted in, while nothing closed since: open, and the clock
    /// armed as it should be (most elements count in the same window as the last).
    var lastCounted: Int64?

    init(
        _ windowing: AggregateWindowing<Element>, accumulator: WindowAccumulator<Element>,
        elementFailed: @escaping (any Error, Element) throws -> Void, downstream: AnyObserver<Element>,
        lifetime: Lifetime
    ) {
        self.windowing = windowing
        self.accumulator = accumulator
        self.elementFailed = elementFailed
        length = windowing.every?.milliseconds
        eventClock = windowing.scheduler as? EventTimeScheduler
        asTheyCome = windowing.asTheyCome
        lateDomain = windowing.lateness?.domain
        clockStart = windowing.scheduler.now
        clockStartMilliseconds = clockStart.milliseconds
        super.init(downstream: downstream, lifetime: lifetime)
        lifetime.add(timer)
    }

    var earliest: Int64? { open.first }

    func take(_ element: Element) {
        if lifetime.isDisposed { return }  // (read from the non-generic lifetime: no call per element)
        do {
            try add(element)
        } catch {
            failed(error, element)
        }
    }

    /// An element the accumulator failed on: dropped, or the end. (Apart from `take`: an event is
    /// of the element's type, which code not specialised for it looks up on entry.)
    @inline(never)
    func failed(_ error: any Error, _ element: Element) {
        do { try elementFailed(error, element) } catch { fail(error) }
    }

    @inline(never)
    func fail(_ error: any Error) {
        forwardTerminal(.error(error))
    }

    func complete() {
        if isDisposed { return }
        while let first = earliest { flush(first) }
        forwardTerminal(.completed)
    }

    /// Counts `element` in its window (a late one updates an emitted window instead).
    @inline(__always)
    private func add(_ element: Element) throws {
        var elementTime: Int64?
        if let domain = asTheyCome { elementTime = domain.elementTime ?? domain.lateTime }
        if let domain = lateDomain, let late = domain.lateTime, try update(element, at: late) { return }
        var index = try windowNumber(of: element, elementTime: elementTime)
        // One window open at a time, unless elements come as they come: a later one closes it, an
        // earlier one counts in it.
        if asTheyCome == nil, let current = earliest {
            if index > current { flush(current) } else { index = current }
        }
        if index != lastCounted {
            opened(index)
            armClock()
            lastCounted = index
        }
        try accumulator.count(element, index, elementTime)
        if let origin = Origin.current { held[index, default: []].append(origin) }
    }

    /// Window `number` is open from now on.
    private func opened(_ number: Int64) {
        // Most elements count in the window open last, or the only one.
        if open.last == number || open.first == number { return }
        let place = open.firstIndex { $0 > number } ?? open.endIndex
        if place > 0, open[place - 1] == number { return }
        open.insert(number, at: place)
    }

    /// The number of the window `element` counts in: by its `time`, its own event time, the
    /// event clock, or the run's clock; 0 without `every`.
    @inline(__always)
    private func windowNumber(of element: Element, elementTime: Int64?) throws -> Int64 {
        guard let every = windowing.every, let length else { return 0 }
        if let time = accumulator.time {
            return Int64((try time(element) / Double(length)).rounded(.down))
        } else if let elementTime {
            return Self.windowNumber(elementTime, every: length)
        } else if let eventClock {
            // Whole milliseconds already: no Duration arithmetic per element.
            return Self.windowNumber(eventClock.clock - clockStartMilliseconds, every: length)
        }
        let milliseconds = Double((windowing.scheduler.now - clockStart).milliseconds)
        return Int64((milliseconds / Double(every.milliseconds)).rounded(.down))
    }

    /// The number of the window of length `every` that holds `milliseconds` (rounded down, also
    /// below zero).
    @inline(__always)
    static func windowNumber(_ milliseconds: Int64, every: Int64) -> Int64 {
        let quotient = milliseconds / every
        return milliseconds % every != 0 && (milliseconds < 0) != (every < 0) ? quotient - 1 : quotient
    }

    /// Forgets the windows emitted that late elements may no longer update: those whose end is
    /// more than the allowance behind the watermark.
    private func forgetExpired() {
        guard let allowed = windowing.lateness?.allowed, let length else { return }
        let now = windowing.scheduler.now.milliseconds
        // Window n ends at (n + 1)·length: kept while that plus the allowance is ahead.
        accumulator.forget(Self.windowNumber(now - allowed, every: length))
    }

    /// Emits the open window `number`.
    private func flush(_ number: Int64) {
        guard let place = open.firstIndex(of: number) else { return }
        open.remove(at: place)
        lastCounted = nil
        let start = windowing.every.map { ($0 * number).milliseconds } ?? 0
        // Its end on the clock: where every partition's results for it are put in order.
        let end =
            length.map { length in (asTheyCome != nil ? 0 : clockStartMilliseconds) + length * (number + 1) }
            ?? .max
        // The window's results go out on behalf of every message counted in it.
        let origin = Origin.joining(held.removeValue(forKey: number) ?? [])
        let downstream = downstream
        Origin.with(origin) {
            accumulator.close(number, start, end) { downstream.on(.next($0)) }
        }
        forgetExpired()
    }

    /// A late element for a window already emitted: that window's results again, updated.
    private func update(_ element: Element, at late: Int64) throws -> Bool {
        guard let length else { return false }
        let index = Self.windowNumber(late, every: length)
        let now = windowing.scheduler.now.milliseconds
        guard index < Self.windowNumber(now, every: length), !open.contains(index) else { return false }
        forgetExpired()
        let downstream = downstream
        try accumulator.update(element, index, late) { downstream.on(.next($0)) }
        return true
    }

    /// Arms the clock for the end of the earliest open window (not with `time`), then for the next.
    private func armClock() {
        guard let every = windowing.every, accumulator.time == nil, let first = earliest else { return }
        guard armedFor != first else { return }
        armedFor = first
        let end = clockStart + every * (first + 1)
        let scheduler = windowing.scheduler
        // The timer works for no message of its own: the window carries its elements'.
        timer.disposable = Origin.with(nil) {
            scheduler.schedule(after: Swift.max(.zero, end - scheduler.now)) { [self] in
                guard !isDisposed else { return }
                armedFor = nil
                flush(first)
                armClock()
            }
        }
    }

    /// Restores the open windows from `state` (when the run resumes) and keeps them there.
    func keep(in state: OperatorState<Element>) {
        if let restored = state.takeRestored() {
            clockStart = windowing.scheduler.now - (restored.stateField("elapsed")?.stateDuration ?? .zero)
            for number in accumulator.restore(restored) { opened(number) }
            armClock()
        }
        state.keep(
            { [self] in
                Element(
                    stateRecord: [("elapsed", Element(stateDuration: windowing.scheduler.now - clockStart))]
                        + accumulator.save())
            },
            origins: { [self] in held.values.flatMap { $0 } }, until: lifetime)
    }
}
