/// Both an observer and an observable: what it receives, it sends to its current subscribers.
///
/// After a terminal event it sends that event to every later subscriber at once. Use it on its
/// pipeline's scheduler only (it takes no locks).
public final class PublishSubject<Element>: ObserverType, ObservableType {
    private let observers = SubjectObservers<Element>()

    /// A subject with no subscribers.
    public init() {}

    /// Whether anyone is subscribed.
    public var hasObservers: Bool { observers.hasObservers }

    /// Sends the event to every subscriber; ignored after a terminal event.
    public func on(_ event: Event<Element>) {
        if observers.isOpen { observers.send(event) }
    }

    /// The subject as an observable.
    public func asObservable() -> Observable<Element> {
        Observable { [observers] observer, lifetime in observers.add(observer, in: lifetime) }
    }

    /// Releases every subscriber; later subscribers get `RxError.disposed`.
    public func dispose() {
        observers.dispose()
    }
}
