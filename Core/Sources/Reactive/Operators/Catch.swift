extension ObservableType {
    /// On error, continues with the observable `handler` returns for it, subscribed in the same tick.
    ///
    /// Errors of that fallback are not caught again. A throwing handler ends the result with the
    /// handler's error.
    @inlinable
    public func `catch`<Fallback: ObservableType>(
        _ handler: @escaping (any Error) throws -> Fallback
    ) -> Observable<Element> where Fallback.Element == Element {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = CatchSink(handler: { try handler($0).asObservable() }, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: sink.sourceLifetime)
        }
    }
}

@usableFromInline
final class CatchSink<Element>: Sink<Element> {
    @usableFromInline
    let handler: (any Error) throws -> Observable<Element>
    @usableFromInline
    let sourceLifetime: Lifetime

    @inlinable
    init(
        handler: @escaping (any Error) throws -> Observable<Element>, downstream: AnyObserver<Element>,
        lifetime: Lifetime
    ) {
        self.handler = handler
        self.sourceLifetime = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed || sourceLifetime.isDisposed { return }
        switch event {
        case .next:
            forward(event)
        case .completed:
            forwardTerminal(event)
        case .error(let error):
            sourceLifetime.dispose()
            let fallback: Observable<Element>
            do {
                fallback = try handler(error)
            } catch {
                forwardTerminal(.error(error))
                return
            }
            fallback.subscribe(
                AnyObserver { event in
                    if self.isDisposed { return }
                    if event.isStopEvent { self.forwardTerminal(event) } else { self.forward(event) }
                }, in: lifetime)
        }
    }
}
