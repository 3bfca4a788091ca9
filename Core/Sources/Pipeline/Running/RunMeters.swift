import Reactive
import Synchronization

/// What one component of a watched run has done so far: the elements it emitted (a sink: received),
/// the errors it ended with, whether it has ended. Written on the pipeline's thread, read from any
/// (a metrics endpoint), so the counts are atomics the pipeline's thread alone writes, with a
/// relaxed load and store. A component, built in or a plugin, finds its own as `context.meter`
/// and counts on it what it does beside its elements (`count`, `gauge`, `observe`), which
/// `/metrics` exports; the rest is the host's.
@_spi(Components) public final class ComponentMeter: Sendable {
    /// Its place in the file: `source`, `ops.2`, `streams.typed.ops.0`, `sinks.1`.
    public let place: String
    /// Whether it is a source, an operator or a sink.
    @_spi(Host) public let kind: ComponentKind
    /// The component's name (`debounce`).
    @_spi(Host) public let component: String
    /// The meter of what feeds it (the stage before it), nil for a source.
    @_spi(Host) public let upstream: ComponentMeter?
    private let elementCount = Atomic<Int>(0)
    private let errorCount = Atomic<Int>(0)
    private let ended = Atomic<Bool>(false)
    /// What the component itself counts (`http_requests_total`, `sink_bytes_total`), its gauges
    /// (`nats_pending_acks`) and the durations it observed, for the endpoint to export.
    private let extras = Mutex<Extras>(Extras())
    /// The counters and gauges read when the metrics are read (`gauge(_:label:reading:)`).
    private let readings = Mutex<[ExtraKey: @Sendable () -> Int]>([:])
    /// How many taps are attached: one relaxed load an element when none is.
    private let tapCount = Atomic<Int>(0)
    private let taps = Mutex<[Tap]>([])
    /// Taps with room; and elements no tap had room for, which every tap counts as dropped.
    private let hungryTaps = Atomic<Int>(0)
    private let droppedByEveryTap = Atomic<Int>(0)
    /// For a source of known size, how far through it it is (for the progress line).
    public let progress = InputProgress()

    init(place: String, kind: ComponentKind, component: String, upstream: ComponentMeter?) {
        self.place = place
        self.kind = kind
        self.component = component
        self.upstream = upstream
    }

    /// Elements emitted (sources, operators) or received (sinks).
    @_spi(Host) public var elements: Int { elementCount.load(ordering: .relaxed) }
    /// Elements that reached it: a sink's own count, an operator's upstream's.
    @_spi(Host) public var elementsIn: Int? { kind == .sink ? elements : upstream?.elements }
    /// Error events it emitted (or, for a sink, received).
    @_spi(Host) public var errors: Int { errorCount.load(ordering: .relaxed) }
    /// Whether it has completed or failed.
    @_spi(Host) public var isEnded: Bool { ended.load(ordering: .relaxed) }

    /// A counter or gauge a component keeps beside the element counts, by name and one optional
    /// extra label (`status`: `2xx`).
    @_spi(Host) public struct ExtraKey: Hashable, Sendable {
        /// The metric's name without the `rivulet_` prefix; counters end in `_total`.
        public let name: String
        /// An extra label, such as ("status", "2xx").
        public let label: [String]
    }

    struct Extras {
        var values: [ExtraKey: Int] = [:]
        var durations: [String: [Double]] = [:]
    }

    /// The most durations kept between two scrapes (past it, the older half goes).
    static let durationLimit = 10_000

    /// Adds `amount` to the counter `name` (ending in `_total`).
    public func count(_ name: String, label: (String, String)? = nil, by amount: Int = 1) {
        let key = ExtraKey(name: name, label: label.map { [$0.0, $0.1] } ?? [])
        extras.withLock { $0.values[key, default: 0] += amount }
    }

    /// Sets the gauge `name`.
    public func gauge(_ name: String, _ value: Int) {
        extras.withLock { $0.values[ExtraKey(name: name, label: [])] = value }
    }

    /// Sets the gauge `name` with the extra label `label` (`partition`: `3`).
    public func gauge(_ name: String, label: (String, String), _ value: Int) {
        extras.withLock { $0.values[ExtraKey(name: name, label: [label.0, label.1])] = value }
    }

    /// Has the value of `name` (with the extra label `label`) read by `read` each time the run's
    /// metrics are read, on the reader's thread: for a value a component keeps in an atomic of its
    /// own, such as how many elements wait on a thread it runs. A name ending in `_total` is a
    /// counter (`read` must never go down); any other is a gauge. A later call for the same name
    /// and label replaces it.
    public func gauge(_ name: String, label: (String, String), reading read: @escaping @Sendable () -> Int) {
        readings.withLock { $0[ExtraKey(name: name, label: [label.0, label.1])] = read }
    }

    /// Records one duration (seconds) of `name`, for a histogram.
    public func observe(_ name: String, seconds: Double) {
        extras.withLock { extras in
            extras.durations[name, default: []].append(seconds)
            // Nobody scraping: keep the newest half at once rather than shift the array every time.
            if let count = extras.durations[name]?.count, count > Self.durationLimit {
                extras.durations[name]!.removeFirst(count - Self.durationLimit / 2)
            }
        }
    }

    /// The counters and gauges so far, those read on demand read now.
    @_spi(Host) public var extraValues: [ExtraKey: Int] {
        var values = extras.withLock { $0.values }
        for (key, read) in readings.withLock({ $0 }) { values[key] = read() }
        return values
    }

    /// What a sink counts of the elements it received but did not write (an HTTP request that
    /// failed, and those queued behind it when the run fails): the run's summary leaves them out.
    public static let unwrittenCounter = "sink_unwritten_total"

    /// The elements a sink wrote: those it received, less those it counted as not written.
    @_spi(Host) public var written: Int {
        elements - (extraValues.first { $0.key.name == Self.unwrittenCounter }?.value ?? 0)
    }

    /// The durations observed since the last call, by name.
    @_spi(Host) public func takeDurations() -> [String: [Double]] {
        extras.withLock { extras in
            defer { extras.durations = [:] }
            return extras.durations
        }
    }

    /// Starts copying the elements it emits (a sink: receives) into `tap`.
    @_spi(Host) public func attach(_ tap: Tap) {
        tap.start(seen: droppedByEveryTap.load(ordering: .relaxed))
        taps.withLock { $0.append(tap) }
        hungryTaps.wrappingAdd(1, ordering: .relaxed)
        tapCount.wrappingAdd(1, ordering: .relaxed)
    }

    /// Stops copying into `tap`.
    @_spi(Host) public func detach(_ tap: Tap) {
        let removed = taps.withLock { taps in
            let before = taps.count
            taps.removeAll { $0 === tap }
            return before - taps.count
        }
        guard removed > 0 else { return }
        if !tap.isFull { hungryTaps.wrappingSubtract(1, ordering: .relaxed) }
        tapCount.wrappingSubtract(removed, ordering: .relaxed)
    }

    /// What `tap` holds, and how many elements it dropped since the last call (it has room again).
    @_spi(Host) public func take(_ tap: Tap) -> (lines: [[UInt8]], dropped: Int) {
        let (taken, wasFull) = tap.take(seen: droppedByEveryTap.load(ordering: .relaxed))
        if wasFull { hungryTaps.wrappingAdd(1, ordering: .relaxed) }
        return taken
    }

    /// Copies `value` into the taps; while every one is full (a reader slower than the run), the
    /// element is only counted, without a lock, for each tap to say it dropped it.
    private func offer(_ value: Value) {
        guard hungryTaps.load(ordering: .relaxed) > 0 else {
            droppedByEveryTap.wrappingAdd(1, ordering: .relaxed)
            return
        }
        let filled = taps.withLock { taps in taps.reduce(0) { $0 + ($1.offer(value) ? 1 : 0) } }
        if filled > 0 { hungryTaps.wrappingSubtract(filled, ordering: .relaxed) }
    }

    /// Counts elements a source read but did not emit: the stretch it ran for the operators after
    /// it (`parallel:`) dropped them. Called on the pipeline's thread.
    func countUnemitted(_ count: Int) {
        elementCount.store(elementCount.load(ordering: .relaxed) &+ count, ordering: .relaxed)
    }

    func record(_ event: Event<Value>) {
        switch event {
        case .next(let value):
            // One writer (the pipeline's thread): a load and a store, no locked read-modify-write,
            // which would cost every element of every run several nanoseconds.
            elementCount.store(elementCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            if tapCount.load(ordering: .relaxed) > 0 { offer(value) }
        case .error:
            errorCount.wrappingAdd(1, ordering: .relaxed)
            ended.store(true, ordering: .relaxed)
        case .completed: ended.store(true, ordering: .relaxed)
        }
    }
}

/// How far a source is through an input of known size (a file's bytes, a fixture's elements):
/// two relaxed stores as it reads, read by the progress line from another thread.
@_spi(Components) public final class InputProgress: Sendable {
    private let doneCount = Atomic<Int>(0)
    private let totalCount = Atomic<Int>(-1)

    init() {}

    /// The size of the input, when it is known before it is read.
    public func start(total: Int) { totalCount.store(total, ordering: .relaxed) }

    /// How much of it has been read.
    public func advance(to done: Int) { doneCount.store(done, ordering: .relaxed) }

    /// What has been read of how much; nil when the size is not known (a stream without end).
    @_spi(Host) public var fraction: (done: Int, total: Int)? {
        let total = totalCount.load(ordering: .relaxed)
        return total < 0 ? nil : (min(doneCount.load(ordering: .relaxed), total), total)
    }
}

/// Elements copied out of a running pipeline for `rivulet tap`: a bounded buffer the pipeline
/// fills and a reader empties. What does not fit is counted and dropped, never waited for, so a
/// slow reader never slows the pipeline.
@_spi(Host) public final class Tap: Sendable {
    private struct Buffer {
        var lines: [[UInt8]] = []
        var dropped = 0
        var isFull = false
        /// The meter's count of elements no tap had room for, when this tap last looked.
        var seen = 0
    }

    private let buffer = Mutex<Buffer>(Buffer())
    /// How many elements wait for the reader at most.
    public let capacity: Int

    /// An empty tap holding at most `capacity` elements; attach it to a meter to fill it, and
    /// empty it with the meter's `take`.
    public init(capacity: Int = 1000) {
        self.capacity = capacity
    }

    var isFull: Bool { buffer.withLock { $0.isFull } }

    func start(seen: Int) { buffer.withLock { $0.seen = seen } }

    /// Copies `value` as a JSON line, or counts it dropped when the buffer is full; returns
    /// whether this element filled it.
    func offer(_ value: Value) -> Bool {
        buffer.withLock { buffer in
            guard !buffer.isFull else {
                buffer.dropped += 1
                return false
            }
            var line: [UInt8] = []
            JSONSerializer.write(value, to: &line)
            line.append(0x0A)
            buffer.lines.append(line)
            buffer.isFull = buffer.lines.count >= capacity
            return buffer.isFull
        }
    }

    /// The lines waiting and the elements dropped since the last call (its own, and those no tap
    /// had room for: `seen` is the meter's count of them now); whether it was full.
    func take(seen: Int) -> (taken: (lines: [[UInt8]], dropped: Int), wasFull: Bool) {
        buffer.withLock { buffer in
            let taken = (buffer.lines, buffer.dropped + max(0, seen - buffer.seen))
            let wasFull = buffer.isFull
            buffer = Buffer(seen: seen)
            return (taken, wasFull)
        }
    }
}

/// The meters of a watched run, one a component, in file order; and whether every source is
/// ready. Given to the compiler only when the run is watched (`run --metrics`): a run that is
/// not pays nothing.
@_spi(Host) public final class RunMeters: @unchecked Sendable {
    private let lock = Mutex<(all: [ComponentMeter], byKey: [String: ComponentMeter])>(([], [:]))
    /// The sources still connecting (see `SourceReadiness`); shared with the run's components.
    public let readiness = SourceReadiness(waitsForStart: true)

    /// Whether operators are metered too, or only sources and sinks (what a run's summary and
    /// progress need, at two relaxed stores an element).
    public let metersOperators: Bool

    /// None yet: the compiler adds one a component (an operator only with `metersOperators`).
    public init(metersOperators: Bool = true) { self.metersOperators = metersOperators }

    /// Every component's meter, in file order.
    public var components: [ComponentMeter] { lock.withLock { $0.all } }

    /// The meter of the component whose checkpoint key is `key` (how a component finds its own).
    public func meter(forKey key: String) -> ComponentMeter? { lock.withLock { $0.byKey[key] } }

    func add(place: String, kind: ComponentKind, component: String, upstream: ComponentMeter?, key: String)
        -> ComponentMeter
    {
        let meter = ComponentMeter(place: place, kind: kind, component: component, upstream: upstream)
        lock.withLock {
            $0.all.append(meter)
            $0.byKey[key] = meter
        }
        return meter
    }

    /// `observable`, each of its events counted by `meter`.
    static func metered(_ observable: Observable<Value>, _ meter: ComponentMeter) -> Observable<Value> {
        Observable { observer, lifetime in
            observable.subscribe(
                AnyObserver { event in
                    meter.record(event)
                    observer.on(event)
                }, in: lifetime)
        }
    }

    /// The place of a stream's part: `source`, `ops.2` (the linear form), `streams.NAME.ops.2`.
    public static func place(_ pipeline: ValidatedPipeline, stream: String, _ part: String) -> String {
        pipeline.spec.form == .linear ? part : "streams.\(stream).\(part)"
    }

    /// The place of the sink at `index`: `sink` for the only sink of the linear form, else `sinks.N`.
    public static func sinkPlace(_ pipeline: ValidatedPipeline, index: Int) -> String {
        pipeline.spec.form == .linear && pipeline.sinks.count == 1 ? "sink" : "sinks.\(index)"
    }
}

/// Sources that connect after the run starts (NATS) say when they are ready: a watched run is
/// ready (`/ready`) once it has started and none is still connecting.
@_spi(Host) public final class SourceReadiness: Sendable {
    private let pending: Atomic<Int>

    /// Nothing connecting; with `waitsForStart`, not ready either until `started()` (the metrics
    /// endpoint answers before the sources are subscribed and say they are connecting).
    public init(waitsForStart: Bool = false) {
        pending = Atomic(waitsForStart ? 1 : 0)
        startPending = Flag(waitsForStart)
    }

    private let startPending: Flag

    /// Whether the run started and every source that said it was connecting has said it is ready.
    public var isReady: Bool { pending.load(ordering: .relaxed) == 0 }

    /// The run has started: its sources are subscribed (only the first call counts).
    public func started() {
        if startPending.value.exchange(false, ordering: .relaxed) { pending.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// A source starts connecting; call the returned function once it is connected (only the
    /// first call counts).
    public func connecting() -> @Sendable () -> Void {
        pending.wrappingAdd(1, ordering: .relaxed)
        let done = Flag(false)
        return { [self] in
            if !done.value.exchange(true, ordering: .relaxed) { pending.wrappingSubtract(1, ordering: .relaxed) }
        }
    }

    private final class Flag: Sendable {
        let value: Atomic<Bool>
        init(_ value: Bool) { self.value = Atomic(value) }
    }
}

extension ComponentContext {
    /// Says that this source is connecting (to a server) after the run started: a watched run is
    /// not ready (`/ready`) until the returned function is called, once it is connected (only
    /// the first call counts). Without a watched run, it does nothing.
    @_spi(Components) public func connecting() -> @Sendable () -> Void {
        guard let readiness = existing(SourceReadiness.self) else { return {} }
        return readiness.connecting()
    }

    /// This component's meter, for what it counts beside its elements (a component inside
    /// another's inner chain or source: its owner's, so `flatMapLatest`'s requests are counted
    /// on it); nil when nothing meters the run or the component, and then it counts nothing.
    @_spi(Components) public var meter: ComponentMeter? {
        meterKey.isEmpty ? nil : existing(RunMeters.self)?.meter(forKey: meterKey)
    }
}
