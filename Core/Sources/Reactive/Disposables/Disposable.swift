/// A resource that can be released: a subscription, a scheduled action, a timer.
///
/// `dispose()` is idempotent. Like the rest of the runtime, disposables are used on their
/// pipeline's scheduler only, so they take no locks.
public protocol Disposable: AnyObject {
    /// Releases the resource. Calling it again does nothing.
    func dispose()
}

extension Disposable {
    /// Adds this disposable to `bag`, which disposes it when the bag is disposed or deinitialized.
    public func disposed(by bag: DisposeBag) {
        bag.insert(self)
    }
}

/// Factory functions for simple disposables.
public enum Disposables {
    /// A disposable that does nothing.
    public static func create() -> any Disposable { NopDisposable.instance }

    /// A disposable that runs `action` once, on the first `dispose()`.
    public static func create(with action: @escaping () -> Void) -> any Disposable {
        AnonymousDisposable(action)
    }

    /// A disposable that disposes all of `disposables`, in order.
    public static func create(_ disposables: any Disposable...) -> any Disposable {
        CompositeDisposable(disposables)
    }
}

/// The disposable that does nothing.
final class NopDisposable: Disposable, Sendable {
    static let instance = NopDisposable()
    func dispose() {}
}

/// Runs an action on its first disposal.
@_spi(Components) public final class AnonymousDisposable: Disposable {
    private var action: (() -> Void)?

    /// A disposable that runs `action` once, on the first `dispose()`.
    public init(_ action: @escaping () -> Void) {
        self.action = action
        Resources.made()
    }

    deinit { Resources.freed() }

    /// Whether `dispose()` was called.
    public var isDisposed: Bool { action == nil }

    /// Runs the action the first time; later calls do nothing.
    public func dispose() {
        guard let action else { return }
        self.action = nil
        action()
    }
}

/// A flag that records whether `dispose()` was called.
@_spi(Components) public final class BooleanDisposable: Disposable {
    deinit { Resources.freed() }

    /// Whether `dispose()` was called.
    public private(set) var isDisposed = false

    /// A disposable not yet disposed.
    public init() { Resources.made() }

    /// Marks the disposable disposed.
    public func dispose() { isDisposed = true }
}
