/// A clock moved by the data instead of by the wall: event time. Its time is a watermark — how
/// far the stream's own timestamps have surely got — and whoever reads the stream moves it with
/// `advance(to:)`. Work scheduled on it runs when the watermark passes its due time, in time
/// order (FIFO within one millisecond), with `now` reading that due time, exactly as on a virtual
/// clock; so every timed operator (debounce, window, sample, timeout...) runs on event time with
/// the code and semantics it has on any other clock.
///
/// Before the first element the clock has not started: work scheduled then (a `window`'s first
/// period, a `timeout`) is counted from the first element's time, as if the stream had been
/// subscribed then. Immediate work scheduled from outside an advance (not caused by an element)
/// is run soon on `base`, the pipeline's own scheduler, whose thread this clock shares.
@_spi(Components) public final class EventTimeScheduler: SchedulerType {
    private struct Item {
        let time: Int64
        let sequence: UInt64
        let action: ScheduledAction

        static func ordered(_ a: Item, _ b: Item) -> Bool {
            a.time != b.time ? a.time < b.time : a.sequence < b.sequence
        }
    }

    // The clock and its queue are read for every element on event time, on the pipeline's
    // thread only: unchecked, as a dynamic exclusivity check costs a thread-local lookup. Other
    // modules read them through getters: `@exclusivity(unchecked)` does not reach past the module,
    // so a stored property read from one is checked each time.
    @exclusivity(unchecked) private var watermark: Int64 = 0
    @exclusivity(unchecked) private var started = false
    /// The watermark, in milliseconds since the Unix epoch (0 until started).
    public private(set) var clock: Int64 {
        get { watermark }
        set { watermark = newValue }
    }
    /// Whether the clock was set: by the first element's time (`start`) or by a checkpoint's
    /// watermark (`restore`).
    public private(set) var isStarted: Bool {
        get { started }
        set { started = newValue }
    }
    /// The pipeline's scheduler.
    public let base: any SchedulerType
    @exclusivity(unchecked) private var queue = PriorityQueue<Item>(by: Item.ordered)
    private var sequence: UInt64 = 0
    @exclusivity(unchecked) private var advancing = false
    private var drainAsked = false

    /// A clock that has not started, sharing `base`'s thread.
    public init(base: any SchedulerType) {
        self.base = base
    }

    /// The watermark, as a point on this clock.
    public var now: RxTime { .milliseconds(clock) }

    /// Whether the pipeline was asked to stop.
    public var isInterrupted: Bool { base.isInterrupted }

    /// Runs `action` at the current watermark, after what is already due.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> any Disposable {
        let scheduled = push(at: clock, action)
        if !advancing && !drainAsked {
            drainAsked = true
            base.schedule { [weak self] in
                guard let self else { return }
                self.drainAsked = false
                self.advance(to: self.clock)
            }
        }
        return scheduled
    }

    /// Runs `action` once the watermark has passed `dueTime` from now.
    @discardableResult
    public func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> any Disposable {
        let nanoseconds = max(0, dueTime.totalNanoseconds)
        // Rounded up to the millisecond: work is never run before its time.
        let milliseconds = nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 == 0 ? 0 : 1)
        let (time, overflow) = clock.addingReportingOverflow(milliseconds)
        return push(at: overflow ? .max : time, action)
    }

    private func push(at time: Int64, _ action: @escaping () -> Void) -> ScheduledAction {
        let scheduled = ScheduledAction(action, origin: Origin.current)
        sequence &+= 1
        queue.push(Item(time: time, sequence: sequence, action: scheduled))
        return scheduled
    }

    /// Starts the clock at `time` (the first element's): what was scheduled before is moved by as
    /// much, as if it had been scheduled then.
    public func start(at time: Int64) {
        guard !isStarted else { return }
        isStarted = true
        let shift = time - clock
        var moved = PriorityQueue<Item>(by: Item.ordered)
        while let item = queue.popFirst() {
            let (shifted, overflow) = item.time.addingReportingOverflow(shift)
            moved.push(Item(time: overflow ? .max : shifted, sequence: item.sequence, action: item.action))
        }
        queue = moved
        clock = time
    }

    /// Sets the clock to `time` without running anything (a checkpoint's watermark, restored
    /// before anything is scheduled).
    public func restore(clock time: Int64) {
        isStarted = true
        clock = time
    }

    /// Moves the watermark to `time` (never back), running in time order everything due by then;
    /// `now` reads each action's due time while it runs.
    public func advance(to time: Int64) {
        guard !advancing else { return }
        // Most advances (one per element) have nothing due: the clock just moves.
        guard let due = queue.withFirst({ $0.time }), due <= time else {
            if time > clock { clock = time }
            return
        }
        advancing = true
        defer { advancing = false }
        while let next = queue.first, next.time <= time {
            _ = queue.popFirst()
            if next.action.isCancelled { continue }
            if next.time > clock { clock = next.time }
            next.action.run()
        }
        if time > clock { clock = time }
    }

    /// Moves the watermark to `time`, an element's (or a watermark elements at `time` may still
    /// come at), running only the work due before it: work due at `time` itself waits until the
    /// watermark passes it. So an element and a timer of the same millisecond run element first,
    /// as on the run clock, where input is scheduled before any operator's timer.
    public func advance(toElementAt time: Int64) {
        advance(to: time == .min ? time : time - 1)
        if !advancing && time > clock { clock = time }
    }

    /// When the next work not cancelled is due; nil when none is.
    public var nextDue: Int64? {
        while let next = queue.first, next.action.isCancelled { _ = queue.popFirst() }
        return queue.first?.time
    }
}
