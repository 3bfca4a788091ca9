/// A scheduler whose clock is an integer tick count moved by the scheduler itself: work runs in
/// time order, at once, and the same run always gives the same result.
///
/// Actions due at the same tick run in the order they were scheduled (FIFO), which is the tie rule
/// RxSwift's virtual-time tests rely on. `resolution` converts durations to ticks (RxTest uses one
/// second per tick; pipeline tests use one millisecond).
@_spi(Components) open class VirtualTimeScheduler: SchedulerType {
    private struct Item {
        let time: Int
        let sequence: UInt64
        let action: ScheduledAction
    }

    /// The current tick.
    public private(set) var clock: Int
    /// The duration of one tick.
    public let resolution: RxTimeInterval
    private var queue = PriorityQueue<Item> { a, b in
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }
    private var sequence: UInt64 = 0
    private var isRunning = false
    /// Raised from any thread (a signal) to stop the run: a source emitting in a loop returns,
    /// and whoever drives the clock stops.
    @_spi(Components) public let interruption = InterruptionFlag()

    /// Whether `interruption` was raised.
    public var isInterrupted: Bool { interruption.isRaised }

    /// A scheduler starting at `initialClock`, with ticks of `resolution`.
    public init(initialClock: Int = 0, resolution: RxTimeInterval = .seconds(1)) {
        precondition(resolution > .zero, "resolution must be positive")
        self.clock = initialClock
        self.resolution = resolution
    }

    /// The current time: `clock` ticks of `resolution`.
    public var now: RxTime { resolution * clock }

    /// The number of ticks in `duration`, rounded to the nearest tick.
    @_spi(Components) public func ticks(_ duration: RxTimeInterval) -> Int {
        let resolutionNanoseconds = resolution.totalNanoseconds
        let nanoseconds = duration.totalNanoseconds
        let (rounded, overflow) = nanoseconds.addingReportingOverflow(resolutionNanoseconds / 2)
        return Int((overflow ? .max : rounded) / resolutionNanoseconds)
    }

    /// Where an action asked for at `time` really goes. The default keeps it; `TestScheduler`
    /// moves anything due now or earlier to the next tick, as RxTest does.
    open func adjustScheduledTime(_ time: Int) -> Int { time }

    /// Runs `action` at tick `time` (adjusted by `adjustScheduledTime`).
    @discardableResult
    @_spi(Components) public func scheduleAt(_ time: Int, _ action: @escaping () -> Void) -> any Disposable {
        let scheduled = ScheduledAction(action, origin: Origin.current)
        sequence += 1
        queue.push(Item(time: adjustScheduledTime(time), sequence: sequence, action: scheduled))
        return scheduled
    }

    /// Runs `action` at the current tick (after what is already due now).
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> any Disposable {
        scheduleAt(clock, action)
    }

    /// Runs `action` `dueTime` from now.
    @discardableResult
    public func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> any Disposable {
        let (time, overflow) = clock.addingReportingOverflow(max(0, ticks(dueTime)))
        return scheduleAt(overflow ? .max : time, action)
    }

    /// Runs every scheduled action, moving the clock forward, until none is left or `stop()`.
    @_spi(Components) public func start() {
        run(until: nil)
    }

    /// Runs the actions due at or before `time`, then sets the clock to `time`.
    @_spi(Components) public func advance(to time: Int) {
        run(until: time)
        if clock < time { clock = time }
    }

    /// Runs the next action not cancelled, moving the clock to its time; false when none is left.
    @discardableResult
    @_spi(Components) public func runNext() -> Bool {
        while let next = queue.popFirst() {
            if next.action.isCancelled { continue }
            if next.time > clock { clock = next.time }
            next.action.run()
            return true
        }
        return false
    }

    /// Stops `start()` or `advance(to:)` after the action that is running.
    @_spi(Components) public func stop() { isRunning = false }

    /// Whether any action (cancelled or not) is still queued.
    @_spi(Components) public var hasPendingWork: Bool { !queue.isEmpty }

    /// Whether two actions still to run (not cancelled) are due at the same tick: they run in the
    /// order they were scheduled, an order that whoever schedules both again (a run resumed from
    /// a checkpoint, restoring its timers) may not keep.
    @_spi(Components) public var hasActionsDueTogether: Bool {
        var times = Set<Int>()
        for item in queue.elements where !item.action.isCancelled {
            if !times.insert(item.time).inserted { return true }
        }
        return false
    }

    private func run(until limit: Int?) {
        isRunning = true
        while isRunning, let next = queue.first {
            if let limit, next.time > limit { break }
            _ = queue.popFirst()
            if next.action.isCancelled { continue }
            if next.time > clock { clock = next.time }
            next.action.run()
        }
        isRunning = false
    }
}
