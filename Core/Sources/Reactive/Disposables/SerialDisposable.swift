/// Holds a replaceable disposable: setting a new one disposes the previous one.
public final class SerialDisposable: Disposable {
    private var current: (any Disposable)?
    /// Whether `dispose()` was called.
    public private(set) var isDisposed = false

    /// An empty holder.
    public init() { Resources.made() }

    deinit { Resources.freed() }

    /// The held disposable. Assigning disposes the previous one; after disposal, disposes the new one.
    public var disposable: (any Disposable)? {
        get { current }
        set {
            if isDisposed {
                newValue?.dispose()
                return
            }
            let old = current
            current = newValue
            old?.dispose()
        }
    }

    /// Disposes the held disposable and every later one.
    public func dispose() {
        if isDisposed { return }
        isDisposed = true
        let held = current
        current = nil
        held?.dispose()
    }
}
