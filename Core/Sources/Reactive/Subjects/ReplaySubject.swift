/// A subject that replays past elements (all, or the last `bufferSize`) to each new subscriber,
/// followed by the terminal event if there was one.
public final class ReplaySubject<Element>: ObserverType, ObservableType {
    private let observers = SubjectObservers<Element>()
    private var buffer: [Element] = []
    private var bufferStart = 0
    private let bufferSize: Int?

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
        guard observers.isOpen else { return }
        if case .next(let element) = event { record(element) }
        observers.send(event)
    }

    /// Keeps `element` for later subscribers, forgetting the oldest past `bufferSize`.
    private func record(_ element: Element) {
        buffer.append(element)
        guard let bufferSize, buffer.count - bufferStart > bufferSize else { return }
        bufferStart = buffer.count - bufferSize
        if bufferStart > 64 && bufferStart * 2 > buffer.count {
            buffer.removeFirst(bufferStart)
            bufferStart = 0
        }
    }

    /// The subject as an observable that replays the buffer first.
    public func asObservable() -> Observable<Element> {
        Observable { [self] observer, lifetime in
            observers.add(observer, in: lifetime) {
                for element in replayed {
                    if lifetime.isDisposed { return }
                    observer.on(.next(element))
                }
            }
        }
    }

    /// Releases every subscriber and the buffer.
    public func dispose() {
        observers.dispose()
        buffer.removeAll()
        bufferStart = 0
    }
}
