/// Holds one disposable that is set once; disposing before it is set disposes it when it arrives.
public final class SingleAssignmentDisposable: Disposable {
    private var current: (any Disposable)?
    private var wasSet = false
    /// Whether `dispose()` was called.
    public private(set) var isDisposed = false

    /// An empty holder.
    public init() { Resources.made() }

    deinit { Resources.freed() }

    /// Sets the held disposable. Setting it twice is a programming error.
    public func setDisposable(_ disposable: any Disposable) {
        precondition(!wasSet, "SingleAssignmentDisposable was already assigned")
        wasSet = true
        if isDisposed {
            disposable.dispose()
        } else {
            current = disposable
        }
    }

    /// Disposes the held disposable, now or when it is set.
    public func dispose() {
        if isDisposed { return }
        isDisposed = true
        let held = current
        current = nil
        held?.dispose()
    }
}
