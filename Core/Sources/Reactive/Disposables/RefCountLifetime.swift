/// A lifetime that ends when its owner has ended and nothing holds it any more: the source
/// subscription of `groupBy` and `window`, which lives on while a group or a window emitted
/// earlier is still subscribed (RxSwift's `RefCountDisposable`).
@usableFromInline
final class RefCountLifetime {
    /// The lifetime held.
    @usableFromInline
    let lifetime = Lifetime()
    @usableFromInline
    var holders = 0
    @usableFromInline
    var ownerEnded = false

    @inlinable
    init() {}

    /// Holds the lifetime until `holder` ends.
    @inlinable
    func hold(until holder: Lifetime) {
        if lifetime.isDisposed { return }
        holders += 1
        holder.onDispose { [self] in
            holders -= 1
            endIfReleased()
        }
    }

    /// The owner (the outer subscription) has ended.
    @inlinable
    func ownerDidEnd() {
        ownerEnded = true
        endIfReleased()
    }

    @inlinable
    func endIfReleased() {
        if ownerEnded && holders == 0 { lifetime.dispose() }
    }
}
