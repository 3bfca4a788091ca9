extension ObservableType {
    /// Passes on elements until `other` emits its first element, then completes.
    ///
    /// `other` is subscribed first. Its error is forwarded; if it completes without emitting,
    /// only `other` is released and the source goes on.
    @inlinable
    public func take<Other: ObservableType>(until other: Other) -> Observable<Element> {
        let source = asObservable()
        let trigger = other.asObservable()
        return Observable { observer, lifetime in
            let sink = TakeUntilSink<Element, Other.Element>(downstream: observer, lifetime: lifetime)
            let triggerLifetime = lifetime.makeChild()
            trigger.subscribe(
                AnyObserver { event in sink.onTrigger(event, triggerLifetime) }, in: triggerLifetime)
            let forwarder = ForwardSink(downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(forwarder.on), in: lifetime)
        }
    }

    /// Passes on elements until `predicate` is true for one, then completes; with `.inclusive`
    /// that element is emitted first. A throwing predicate ends the sequence with its error.
    @inlinable
    public func take(
        until predicate: @escaping (Element) throws -> Bool, behavior: TakeBehavior = .exclusive
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = TakeWhileSink(
                predicate: { try !predicate($0) }, behavior: behavior, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

/// Whether the element that ends `take(while:)` or `take(until:)` is emitted.
public enum TakeBehavior: Sendable {
    /// The element that ends the sequence is emitted before completion.
    case inclusive
    /// The element that ends the sequence is dropped.
    case exclusive
}

@usableFromInline
final class TakeUntilSink<Element, TriggerElement>: Sink<Element> {
    @inlinable
    override init(downstream: AnyObserver<Element>, lifetime: Lifetime) {
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @usableFromInline
    func onTrigger(_ event: Event<TriggerElement>, _ triggerLifetime: Lifetime) {
        if isDisposed || triggerLifetime.isDisposed { return }
        switch event {
        case .next: forwardTerminal(.completed)
        case .error(let error): forwardTerminal(.error(error))
        case .completed: triggerLifetime.dispose()
        }
    }
}
