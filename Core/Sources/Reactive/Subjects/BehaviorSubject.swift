/// A subject with a current value: each new subscriber gets the latest element first, at once.
public final class BehaviorSubject<Element>: ObserverType, ObservableType {
    private let observers = SubjectObservers<Element>()
    private var latest: Element

    /// A subject whose current value is `value`.
    public init(value: Element) {
        latest = value
    }

    /// The latest element; throws the error if the subject failed, or `RxError.disposed`.
    public func value() throws -> Element {
        if observers.isDisposed { throw RxError.disposed }
        if case .error(let error) = observers.stopEvent { throw error }
        return latest
    }

    /// Updates the current value and sends the event to every subscriber.
    public func on(_ event: Event<Element>) {
        guard observers.isOpen else { return }
        if case .next(let element) = event { latest = element }
        observers.send(event)
    }

    /// The subject as an observable that starts with the current value.
    public func asObservable() -> Observable<Element> {
        Observable { [self] observer, lifetime in
            if observers.add(observer, in: lifetime) { observer.on(.next(latest)) }
        }
    }

    /// Releases every subscriber; later use gets `RxError.disposed`.
    public func dispose() {
        observers.dispose()
    }
}
