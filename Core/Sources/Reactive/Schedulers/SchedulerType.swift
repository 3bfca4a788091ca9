import Synchronization

/// A span of time, as operators take it: `.milliseconds(500)`, `.seconds(2)`.
public typealias RxTimeInterval = Duration

/// A point on a scheduler's clock: the time elapsed since that scheduler's epoch.
public typealias RxTime = Duration

/// Runs work, now or soon, without a notion of time.
///
/// Every operator and component gets its scheduler injected; none reads a clock or sleeps itself.
public protocol ImmediateSchedulerType: AnyObject {
    /// Runs `action` as soon as the scheduler can; the disposable cancels it if it has not run.
    @discardableResult
    func schedule(_ action: @escaping () -> Void) -> any Disposable

    /// Whether the run was asked to stop from another thread (a signal). A source that emits in a
    /// loop checks it between elements and returns, so the stop it waits behind can run.
    var isInterrupted: Bool { get }
}

extension ImmediateSchedulerType {
    /// Never, unless the scheduler can be interrupted.
    public var isInterrupted: Bool { false }
}

/// A flag raised once, from any thread, and read by the scheduler's thread.
@_spi(Components) public final class InterruptionFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    /// A lowered flag.
    public init() {}

    /// Whether it was raised.
    public var isRaised: Bool { raised.load(ordering: .relaxed) }

    /// Raises it.
    public func raise() { raised.store(true, ordering: .relaxed) }
}

/// A scheduler with a clock: it tells the time and runs work after a delay.
///
/// A pipeline has exactly one such scheduler (a real run loop, or virtual time in tests), and all
/// of its events happen on it, so operators need no locks.
public protocol SchedulerType: ImmediateSchedulerType {
    /// The current time on this scheduler's clock.
    var now: RxTime { get }

    /// Runs `action` once `dueTime` has passed; the disposable cancels it if it has not run.
    @discardableResult
    func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> any Disposable
}

extension SchedulerType {
    /// Runs `action` after `startAfter`, then every `period`, until the disposable is disposed.
    public func schedulePeriodic(
        startAfter: RxTimeInterval, period: RxTimeInterval, _ action: @escaping () -> Void
    ) -> any Disposable {
        let current = SerialDisposable()
        func arm(after delay: RxTimeInterval) {
            current.disposable = schedule(after: delay) {
                action()
                if !current.isDisposed { arm(after: period) }
            }
        }
        arm(after: startAfter)
        return current
    }
}

extension Duration {
    /// The duration in whole nanoseconds (rounded toward zero).
    @inlinable
    public var totalNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }

    /// The duration in whole milliseconds (rounded toward zero): what event time counts in.
    @_spi(Components) @inlinable
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

/// A scheduled action that can be cancelled before it runs.
///
/// It keeps the origin current when it was scheduled and runs with it (a `debounce` timer emits
/// its element on behalf of that element's message); cancelling it lets the origin go.
final class ScheduledAction: Disposable {
    var action: (() -> Void)?
    var origin: Origin?

    /// An action run on behalf of `origin` (the current one when it was scheduled on the
    /// scheduler's own thread; nil from other threads).
    init(_ action: @escaping () -> Void, origin: Origin?) {
        self.action = action
        self.origin = origin
        Resources.made()
    }

    deinit { Resources.freed() }

    var isCancelled: Bool { action == nil }

    func dispose() {
        action = nil
        origin = nil
    }

    /// Runs the action unless it was cancelled; it runs at most once.
    func run() {
        guard let action else { return }
        self.action = nil
        guard let origin else { return action() }
        self.origin = nil
        Origin.with(origin, action)
    }
}

/// A scheduler that accepts work from any thread, for sources fed by I/O threads (stdin, a
/// terminal, network responses). Virtual-time schedulers are not: under them such sources read
/// synchronously.
@_spi(Components) public protocol ConcurrentDeliveryScheduler: SchedulerType, Sendable {
    /// Runs `action` on the scheduler's thread, soon; callable from any thread.
    func enqueue(_ action: @escaping @Sendable () -> Void)
}

/// Carries a value that is not `Sendable` to the scheduler's thread, where alone it is used.
///
/// Observers and sinks belong to their pipeline's thread; an I/O thread hands them back through
/// `enqueue` inside this box and never touches them itself.
@_spi(Components) public struct SchedulerBound<Value>: @unchecked Sendable {
    /// The value; use it only on the scheduler's thread.
    public let value: Value

    /// Wraps `value`.
    public init(_ value: Value) {
        self.value = value
    }
}
