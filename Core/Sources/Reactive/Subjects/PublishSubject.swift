/// Both an observer and an observable: what it receives, it sends to its current subscribers.
///
/// After a terminal event it sends that event to every later subscriber at once. Use it on its
/// pipeline's scheduler only (it takes no locks).
public final class PublishSubject<Element>: ObserverType, ObservableType {
    private var observers = ObserverList<Element>()
    private var stopEvent: Event<Element>?
    private var isDisposed = false

    /// A subject with no subscribers.
    public init() {}

    /// Whether anyone is subscribed.
    public var hasObservers: Bool { !observers.isEmpty }

    /// Sends the event to every subscriber; ignored after a terminal event.
    public func on(_ event: Event<Element>) {
        if stopEvent != nil || isDisposed { return }
        if event.isStopEvent {
            stopEvent = event
            let current = observers
            observers.removeAll()
            current.dispatch(event)
        } else {
            observers.dispatch(event)
        }
    }

    /// The subject as an observable.
    public func asObservable() -> Observable<Element> {
        Observable { [self] observer, lifetime in
            if isDisposed {
                observer.on(.error(RxError.disposed))
                return
            }
            if let stopEvent {
                observer.on(stopEvent)
                return
            }
            let key = observers.insert(observer)
            lifetime.onDispose { [weak self] in self?.observers.remove(key) }
        }
    }

    /// Releases every subscriber; later subscribers get `RxError.disposed`.
    public func dispose() {
        isDisposed = true
        observers.removeAll()
    }
}
