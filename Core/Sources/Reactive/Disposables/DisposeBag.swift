/// Collects disposables and disposes them all when it is deinitialized (or on `dispose()`).
public final class DisposeBag {
    private var disposables: [any Disposable] = []
    private var isDisposed = false

    /// An empty bag.
    public init() {}

    /// Adds a disposable; after `dispose()`, disposes it at once.
    public func insert(_ disposable: any Disposable) {
        if isDisposed {
            disposable.dispose()
        } else {
            disposables.append(disposable)
        }
    }

    /// Disposes everything in the bag; later insertions are disposed at once.
    public func dispose() {
        isDisposed = true
        let all = disposables
        disposables = []
        for disposable in all { disposable.dispose() }
    }

    deinit {
        for disposable in disposables { disposable.dispose() }
    }
}
