/// What every subject keeps and does alike: its subscribers, the terminal event once it came,
/// whether it was disposed; sending an event to the subscribers; taking a new subscriber.
final class SubjectObservers<Element> {
    private var list = ObserverList<Element>()
    /// The error or completion the subject received, sent to every later subscriber.
    private(set) var stopEvent: Event<Element>?
    private(set) var isDisposed = false

    /// Whether anyone is subscribed.
    var hasObservers: Bool { !list.isEmpty }

    /// Whether the subject still takes events (it has neither ended nor been disposed).
    var isOpen: Bool { stopEvent == nil && !isDisposed }

    /// Sends `event` to the current subscribers; a terminal event is kept and releases them.
    func send(_ event: Event<Element>) {
        guard event.isStopEvent else { return list.dispatch(event) }
        stopEvent = event
        let current = list
        list.removeAll()
        current.dispatch(event)
    }

    /// Subscribes `observer` until `lifetime` ends, after `replay` has sent it what the subject
    /// replays; returns whether it was added. A disposed subject sends `RxError.disposed` instead,
    /// and one that has ended, its terminal event (after the replay).
    @discardableResult
    func add(_ observer: AnyObserver<Element>, in lifetime: Lifetime, replay: () -> Void = {}) -> Bool {
        if isDisposed {
            observer.on(.error(RxError.disposed))
            return false
        }
        replay()
        if lifetime.isDisposed { return false }
        if let stopEvent {
            observer.on(stopEvent)
            return false
        }
        let key = list.insert(observer)
        lifetime.onDispose { [weak self] in self?.list.remove(key) }
        return true
    }

    /// Releases every subscriber; later ones get `RxError.disposed`.
    func dispose() {
        isDisposed = true
        list.removeAll()
    }
}
