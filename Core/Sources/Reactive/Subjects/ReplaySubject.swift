/// A subject that replays past elements (all, or the last `bufferSize`) to each new subscriber,
/// followed by the terminal event if there was one.
public final class ReplaySubject<Element>: ObserverType, ObservableType {
    private var observers = ObserverList<Element>()
    private var buffer: [Element] = []
    private var bufferStart = 0
    private let bufferSize: Int?
    private var stopEvent: Event<Element>?
    private var isDisposed = false

    private init(bufferSize: Int?) {
        self.bufferSize = bufferSize
    }

    /// A subject replaying the last `bufferSize` elements.
    public static func create(bufferSize: Int) -> ReplaySubject<Element> {
        precondition(bufferSize >= 0, "bufferSize must not be negative")
        return ReplaySubject(bufferSize: bufferSize)
    }

    /// A subject replaying every element it ever received.
    public static func createUnbounded() -> ReplaySubject<Element> {
        ReplaySubject(bufferSize: nil)
    }

    private var replayed: ArraySlice<Element> { buffer[bufferStart...] }

    /// Records the element and sends the event to every subscriber.
    public func on(_ event: Event<Element>) {
        if stopEvent != nil || isDisposed { return }
        switch event {
        case .next(let element):
            buffer.append(element)
            if let bufferSize, buffer.count - bufferStart > bufferSize {
                bufferStart = buffer.count - bufferSize
                if bufferStart > 64 && bufferStart * 2 > buffer.count {
                    buffer.removeFirst(bufferStart)
                    bufferStart = 0
                }
            }
            observers.dispatch(event)
        case .error, .completed:
            stopEvent = event
            let current = observers
            observers.removeAll()
            current.dispatch(event)
        }
    }

    /// The subject as an observable that replays the buffer first.
    public func asObservable() -> Observable<Element> {
        Observable { [self] observer, lifetime in
            if isDisposed {
                observer.on(.error(RxError.disposed))
                return
            }
            for element in replayed {
                if lifetime.isDisposed { return }
                observer.on(.next(element))
            }
            if let stopEvent {
                observer.on(stopEvent)
                return
            }
            let key = observers.insert(observer)
            lifetime.onDispose { [weak self] in self?.observers.remove(key) }
        }
    }

    /// Releases every subscriber and the buffer.
    public func dispose() {
        isDisposed = true
        observers.removeAll()
        buffer.removeAll()
        bufferStart = 0
    }
}
