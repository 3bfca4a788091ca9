#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real-time scheduler a pipeline runs on: one thread runs every action, in due-time order.
///
/// `run()` turns the calling thread into the pipeline's thread until `stop()`. Actions scheduled
/// with `schedule` must be scheduled from that thread (that is where operators run); work from
/// other threads (I/O completions, signal handlers) comes in through `enqueue`, which is
/// thread-safe. Because one thread runs all of a pipeline's events, operators take no locks.
@_spi(Components) public final class SerialRunLoopScheduler: ConcurrentDeliveryScheduler, @unchecked Sendable {
    private struct Item {
        let due: Int64
        let sequence: UInt64
        let action: ScheduledAction
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var queue = PriorityQueue<Item> { a, b in
        a.due != b.due ? a.due < b.due : a.sequence < b.sequence
    }
    private var sequence: UInt64 = 0
    private var isStopped = false
    /// Set by `close`: nothing will run any more, so what is pushed is let go of at once.
    private var isClosed = false
    private let epoch: Int64
    private let interruption = InterruptionFlag()

    /// Whether `interrupt` was called.
    public var isInterrupted: Bool { interruption.isRaised }

    /// Asks the run to stop, from any thread: raises `isInterrupted` at once, so a source emitting
    /// in a loop returns, then runs `stop` on the scheduler's thread.
    public func interrupt(_ stop: @escaping @Sendable () -> Void) {
        interruption.raise()
        enqueue(stop)
    }

    /// A scheduler whose clock starts at zero now.
    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        epoch = Self.monotonicNanoseconds()
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    private static func monotonicNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Time since the scheduler was created, on the monotonic clock.
    public var now: RxTime { .nanoseconds(Self.monotonicNanoseconds() - epoch) }

    private func push(due: Int64, _ action: ScheduledAction) {
        pthread_mutex_lock(mutex)
        if isClosed {
            // Released outside the lock: what the action holds may do work as it goes.
            pthread_mutex_unlock(mutex)
            return
        }
        sequence += 1
        queue.push(Item(due: due, sequence: sequence, action: action))
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `action` on the scheduler's thread after what is already due. Call from that thread.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> any Disposable {
        let scheduled = ScheduledAction(action, origin: Origin.current)
        push(due: Self.monotonicNanoseconds(), scheduled)
        return scheduled
    }

    /// Runs `action` on the scheduler's thread once `dueTime` has passed. Call from that thread.
    @discardableResult
    public func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> any Disposable {
        let scheduled = ScheduledAction(action, origin: Origin.current)
        // Saturating: a due time past the clock's range means never, not a trap.
        let (due, overflow) = Self.monotonicNanoseconds().addingReportingOverflow(max(0, dueTime.totalNanoseconds))
        push(due: overflow ? .max : due, scheduled)
        return scheduled
    }

    /// Delivers work from any thread onto the scheduler's thread.
    public func enqueue(_ action: @escaping @Sendable () -> Void) {
        push(due: Self.monotonicNanoseconds(), ScheduledAction(action, origin: nil))
    }

    /// Runs actions on the calling thread until `stop()` is called.
    public func run() {
        pthread_mutex_lock(mutex)
        while !isStopped {
            guard let next = queue.first else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            let current = Self.monotonicNanoseconds()
            if next.due > current {
                var deadline = timespec(
                    tv_sec: Int(next.due / 1_000_000_000), tv_nsec: Int(next.due % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &deadline)
                continue
            }
            _ = queue.popFirst()
            pthread_mutex_unlock(mutex)
            next.action.run()
            pthread_mutex_lock(mutex)
        }
        isStopped = false
        pthread_mutex_unlock(mutex)
    }

    /// Ends the scheduler for good, after `run()` returned: what waits is let go of (not run),
    /// and so is whatever is handed to it later (a reader thread still delivering lines). Without
    /// it, actions waiting on a scheduler nobody runs keep what they hold (a run's operators) for
    /// as long as anything holds the scheduler.
    public func close() {
        pthread_mutex_lock(mutex)
        isClosed = true
        var waiting: [Item] = []
        while let item = queue.popFirst() { waiting.append(item) }
        pthread_mutex_unlock(mutex)
        waiting.removeAll()
    }

    /// Makes `run()` return after the action that is running; callable from any thread.
    public func stop() {
        pthread_mutex_lock(mutex)
        isStopped = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}
