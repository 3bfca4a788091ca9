extension ObservableType {
    /// Shares one subscription to the source among all subscribers, replaying the last `replay`
    /// elements to each new one.
    ///
    /// The first subscriber connects to the source; when the last one leaves, the source is
    /// released. After the source terminates the connection is forgotten, so a later subscriber
    /// starts a new one (RxSwift's `.whileConnected` scope). Call `share` once and reuse the result.
    public func share(replay: Int = 0) -> Observable<Element> {
        let state = ShareState(source: asObservable(), replay: max(0, replay))
        return Observable { observer, lifetime in state.subscribe(observer, lifetime) }
    }
}

/// The connection `share` keeps between its subscribers.
final class ShareState<Element> {
    private let source: Observable<Element>
    private let replay: Int
    private var connection: ShareConnection<Element>?

    init(source: Observable<Element>, replay: Int) {
        self.source = source
        self.replay = replay
    }

    func subscribe(_ observer: AnyObserver<Element>, _ lifetime: Lifetime) {
        let current: ShareConnection<Element>
        if let connection {
            current = connection
        } else {
            current = ShareConnection(replay: replay) { [weak self] ended in
                if self?.connection === ended { self?.connection = nil }
            }
            connection = current
        }
        current.add(observer, lifetime, connectTo: source)
    }
}

final class ShareConnection<Element> {
    private var observers = ObserverList<Element>()
    private var buffer: [Element] = []
    private let replay: Int
    private let upstream = Lifetime()
    private var isConnected = false
    private let onEnd: (ShareConnection<Element>) -> Void

    init(replay: Int, onEnd: @escaping (ShareConnection<Element>) -> Void) {
        self.replay = replay
        self.onEnd = onEnd
    }

    func add(_ observer: AnyObserver<Element>, _ lifetime: Lifetime, connectTo source: Observable<Element>) {
        for element in buffer {
            if lifetime.isDisposed { return }
            observer.on(.next(element))
        }
        let key = observers.insert(observer)
        lifetime.onDispose {
            self.observers.remove(key)
            if self.observers.isEmpty {
                self.onEnd(self)
                self.upstream.dispose()
            }
        }
        if !isConnected {
            isConnected = true
            source.subscribe(AnyObserver(on), in: upstream)
        }
    }

    private func on(_ event: Event<Element>) {
        if upstream.isDisposed { return }
        switch event {
        case .next(let element):
            if replay > 0 {
                buffer.append(element)
                if buffer.count > replay { buffer.removeFirst(buffer.count - replay) }
            }
            observers.dispatch(event)
        case .error, .completed:
            onEnd(self)
            let current = observers
            observers.removeAll()
            upstream.dispose()
            current.dispatch(event)
        }
    }
}
