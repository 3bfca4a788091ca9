extension ObservableType {
    /// Runs side effects for the events and the life of each subscription, without changing them.
    ///
    /// Each handler runs before the event is passed on; a throwing `onNext` turns that element into
    /// an error. `onSubscribe` runs before subscribing to the source, `onSubscribed` after, and
    /// `onDispose` when the subscription ends (also after a terminal event).
    @inlinable
    public func `do`(
        onNext: ((Element) throws -> Void)? = nil,
        afterNext: ((Element) throws -> Void)? = nil,
        onError: ((any Error) throws -> Void)? = nil,
        onCompleted: (() throws -> Void)? = nil,
        onSubscribe: (() -> Void)? = nil,
        onSubscribed: (() -> Void)? = nil,
        onDispose: (() -> Void)? = nil
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            onSubscribe?()
            if let onDispose { lifetime.onDispose(onDispose) }
            let sink = DoSink(
                onNext: onNext, afterNext: afterNext, onError: onError, onCompleted: onCompleted,
                downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
            onSubscribed?()
        }
    }
}

@usableFromInline
final class DoSink<Element>: Sink<Element> {
    @usableFromInline
    let onNext: ((Element) throws -> Void)?
    @usableFromInline
    let afterNext: ((Element) throws -> Void)?
    @usableFromInline
    let onError: ((any Error) throws -> Void)?
    @usableFromInline
    let onCompleted: (() throws -> Void)?

    @inlinable
    init(
        onNext: ((Element) throws -> Void)?, afterNext: ((Element) throws -> Void)?,
        onError: ((any Error) throws -> Void)?, onCompleted: (() throws -> Void)?,
        downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.onNext = onNext
        self.afterNext = afterNext
        self.onError = onError
        self.onCompleted = onCompleted
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed { return }
        do {
            switch event {
            case .next(let element):
                try onNext?(element)
                forward(event)
                try afterNext?(element)
            case .error(let error):
                try onError?(error)
                forwardTerminal(event)
            case .completed:
                try onCompleted?()
                forwardTerminal(event)
            }
        } catch {
            forwardTerminal(.error(error))
        }
    }
}
