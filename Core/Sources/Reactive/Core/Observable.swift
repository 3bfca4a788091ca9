/// A push-based sequence: subscribing runs it and delivers its events to an observer.
///
/// An `Observable` is a description; nothing happens until `subscribe`. Each subscription runs it
/// anew (it is cold) unless an operator such as `share` says otherwise. The whole runtime follows
/// RxSwift's semantics; see `docs/rx-semantics.md` for the details that matter in practice.
///
/// Subscribing passes a `Lifetime` upstream; disposing it ends the subscription silently.
@frozen
public struct Observable<Element>: ObservableType {
    @usableFromInline
    let producer: (AnyObserver<Element>, Lifetime) -> Void

    /// An observable whose subscription runs `producer` with the observer and the subscription's
    /// lifetime. The producer adds what it opens to the lifetime and stops when it is disposed.
    @inlinable
    public init(_ producer: @escaping (AnyObserver<Element>, Lifetime) -> Void) {
        self.producer = producer
    }

    /// Subscribes `observer` for as long as `lifetime` lives.
    @inlinable
    public func subscribe(_ observer: AnyObserver<Element>, in lifetime: Lifetime) {
        if lifetime.isDisposed { return }
        producer(observer, lifetime)
    }

    /// Itself.
    @inlinable
    public func asObservable() -> Observable<Element> { self }
}

/// Anything that can be viewed as an `Observable`: observables, subjects, test observables.
public protocol ObservableType<Element> {
    /// The type of the elements.
    associatedtype Element
    /// This sequence as an `Observable`.
    func asObservable() -> Observable<Element>
}

extension ObservableType {
    /// Subscribes `observer`; the returned disposable ends the subscription.
    @inlinable
    @discardableResult
    public func subscribe<Observer: ObserverType>(_ observer: Observer) -> any Disposable
    where Observer.Element == Element {
        let lifetime = Lifetime()
        asObservable().subscribe(AnyObserver(observer), in: lifetime)
        return lifetime
    }

    /// Subscribes with closures. After a terminal event the subscription is disposed (and
    /// `onDisposed` runs); the returned disposable ends it earlier. Inlinable, so the handler is
    /// specialised for the element type where it is used rather than looking up generic metadata
    /// for every event.
    @inlinable
    @discardableResult
    public func subscribe(
        onNext: ((Element) -> Void)? = nil,
        onError: ((any Error) -> Void)? = nil,
        onCompleted: (() -> Void)? = nil,
        onDisposed: (() -> Void)? = nil
    ) -> any Disposable {
        let lifetime = Lifetime()
        if let onDisposed { lifetime.onDispose(onDisposed) }
        asObservable().subscribe(
            AnyObserver { event in
                if lifetime.isDisposed { return }
                switch event {
                case .next(let element): onNext?(element)
                case .error(let error):
                    onError?(error)
                    lifetime.dispose()
                case .completed:
                    onCompleted?()
                    lifetime.dispose()
                }
            }, in: lifetime)
        return lifetime
    }
}
