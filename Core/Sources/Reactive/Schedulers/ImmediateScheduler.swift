/// Runs work at once, on the calling thread, in the call to `schedule`.
@_spi(Components) public final class ImmediateScheduler: ImmediateSchedulerType, Sendable {
    /// The shared instance.
    public static let instance = ImmediateScheduler()

    /// An immediate scheduler.
    public init() {}

    /// Runs `action` now; the returned disposable has nothing left to cancel.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> any Disposable {
        action()
        return Disposables.create()
    }
}
