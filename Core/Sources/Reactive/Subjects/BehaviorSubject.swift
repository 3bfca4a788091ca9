/// A subject with a current value: each new subscriber gets the latest element first, at once.
public final class BehaviorSubject<Element>: ObserverType, ObservableType {
    private var observers = ObserverList<Element>()
    private var latest: Element
    private var stopEvent: Event<Element>?
    private var isDisposed = false

    /// A subject whose current value is `value`.
    public init(value: Element) {
        latest = value
    }

    /// The latest element; throws the error if the subject failed, or `RxError.disposed`.
    public func value() throws -> Element {
        if isDisposed { throw RxError.disposed }
        if case .error(let error) = stopEvent { throw error }
        return latest
    }

    /// Updates the current value and sends the event to every subscriber.
    public func on(_ event: Event<Element>) {
        if stopEvent != nil || isDisposed { return }
        switch event {
        case .next(let element):
            latest = element
            observers.dispatch(event)
        case .error, .completed:
            stopEvent = event
            let current = observers
            observers.removeAll()
            current.dispatch(event)
        }
    }

    /// The subject as an observable that starts with the current value.
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
            observer.on(.next(latest))
        }
    }

    /// Releases every subscriber; later use gets `RxError.disposed`.
    public func dispose() {
        isDisposed = true
        observers.removeAll()
    }
}
