/// A group of disposables disposed together; members can be removed (and disposed) one by one.
public final class CompositeDisposable: Disposable {
    /// A key naming a member, returned by `insert`.
    public struct Key: Hashable, Sendable {
        let rawValue: Int
    }

    private var members: [Int: any Disposable] = [:]
    private var nextKey = 0
    /// Whether `dispose()` was called.
    public private(set) var isDisposed = false

    /// An empty group.
    public init() { Resources.made() }

    /// A group holding `disposables`.
    public init(_ disposables: [any Disposable]) {
        Resources.made()
        for disposable in disposables { insert(disposable) }
    }

    deinit { Resources.freed() }

    /// The number of members not yet removed.
    public var count: Int { members.count }

    /// Adds a member and returns its key; after disposal, disposes it at once and returns nil.
    @discardableResult
    public func insert(_ disposable: any Disposable) -> Key? {
        if isDisposed {
            disposable.dispose()
            return nil
        }
        let key = nextKey
        nextKey += 1
        members[key] = disposable
        return Key(rawValue: key)
    }

    /// Removes the member and disposes it.
    public func remove(for key: Key) {
        members.removeValue(forKey: key.rawValue)?.dispose()
    }

    /// Disposes every member, in insertion order.
    public func dispose() {
        if isDisposed { return }
        isDisposed = true
        let all = members
        members = [:]
        for key in all.keys.sorted() { all[key]?.dispose() }
    }
}
