extension ObservableType {
    /// Passes on elements while `predicate` holds, then completes at the first element for which it
    /// is false; with `.inclusive` that element is emitted first. A throwing predicate ends the
    /// sequence with its error. The predicate is never called after the end.
    @inlinable
    public func take(
        while predicate: @escaping (Element) throws -> Bool, behavior: TakeBehavior = .exclusive
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = TakeWhileSink(predicate: predicate, behavior: behavior, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class TakeWhileSink<Element>: Sink<Element> {
    @usableFromInline
    let predicate: (Element) throws -> Bool
    @usableFromInline
    let behavior: TakeBehavior

    @inlinable
    init(
        predicate: @escaping (Element) throws -> Bool, behavior: TakeBehavior,
        downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.predicate = predicate
        self.behavior = behavior
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next(let element) = event, !isDisposed else { return forwardEnd(event) }
        do {
            if try predicate(element) { return forward(event) }
            if behavior == .inclusive { forward(event) }
            forwardTerminal(.completed)
        } catch {
            forwardTerminal(.error(error))
        }
    }
}
