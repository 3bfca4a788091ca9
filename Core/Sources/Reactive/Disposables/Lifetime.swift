/// The lifetime of one subscription: the token a subscriber hands to its source.
///
/// A subscriber creates the lifetime *before* subscribing and passes it upstream, so a source that
/// emits synchronously (a loop over an array) sees `isDisposed` become true in the middle of its
/// loop and stops, and every resource a source opens is added here and released on `dispose()`.
/// Operators that cannot outlive their upstream (map, filter, scan, ...) pass their own lifetime
/// on unchanged; operators that outlive it or subscribe to several sources create child lifetimes.
public final class Lifetime: Disposable {
    // Read by every sink for every event; a lifetime is used on its pipeline's thread only, so the
    // dynamic exclusivity check would be pure cost. Read through an inlinable getter: its body
    // carries the unchecked access into other modules, where code reading the stored property
    // itself would check it anyway.
    @exclusivity(unchecked)
    @usableFromInline
    var disposed = false

    /// Whether the subscription has ended.
    @inlinable
    public var isDisposed: Bool { disposed }
    @usableFromInline
    var first: (any Disposable)?
    @usableFromInline
    var others: [Int: any Disposable] = [:]
    @usableFromInline
    var nextKey = 1
    @usableFromInline
    var firstSlotUsed = false

    /// A live lifetime.
    public init() { Resources.made() }

    deinit { Resources.freed() }

    /// A key naming a resource added to a lifetime, for removing it again.
    public struct Key: Hashable, Sendable {
        @usableFromInline
        let rawValue: Int
        @inlinable
        init(rawValue: Int) { self.rawValue = rawValue }
    }

    /// Adds a resource released when the lifetime ends; if it already ended, disposes it at once.
    @discardableResult
    public func add(_ disposable: any Disposable) -> Key? {
        if isDisposed {
            disposable.dispose()
            return nil
        }
        if !firstSlotUsed {
            firstSlotUsed = true
            first = disposable
            return Key(rawValue: 0)
        }
        let key = nextKey
        nextKey += 1
        others[key] = disposable
        return Key(rawValue: key)
    }

    /// Adds an action run when the lifetime ends.
    public func onDispose(_ action: @escaping () -> Void) {
        add(AnonymousDisposable(action))
    }

    /// Creates a lifetime that ends with this one, or earlier on its own `dispose()`.
    ///
    /// The child removes itself from this lifetime when it ends first, so a long-lived parent
    /// (a `flatMap` with a million inners) does not grow.
    public func makeChild() -> Lifetime {
        let child = Lifetime()
        if let key = add(child) {
            child.onDispose { [weak self] in self?.remove(key) }
        }
        return child
    }

    /// Forgets a resource without disposing it.
    @_spi(Components) public func remove(_ key: Key) {
        if key.rawValue == 0 { first = nil } else { others[key.rawValue] = nil }
    }

    /// Ends the lifetime and disposes every resource added, in the order they were added.
    public func dispose() {
        if isDisposed { return }
        disposed = true
        let head = first
        let rest = others
        first = nil
        others = [:]
        head?.dispose()
        for key in rest.keys.sorted() { rest[key]?.dispose() }
    }
}
