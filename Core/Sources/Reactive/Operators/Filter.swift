extension ObservableType {
    /// Passes on the elements for which `predicate` is true.
    ///
    /// A throwing predicate ends the sequence with its error at that element.
    @inlinable
    public func filter(_ predicate: @escaping (Element) throws -> Bool) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = FilterSink(predicate: predicate, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class FilterSink<Element>: Sink<Element> {
    @usableFromInline
    let predicate: (Element) throws -> Bool

    @inlinable
    init(predicate: @escaping (Element) throws -> Bool, downstream: AnyObserver<Element>, lifetime: Lifetime) {
        self.predicate = predicate
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next(let element) = event, !isDisposed else { return forwardEnd(event) }
        do { if try predicate(element) { forward(event) } } catch { forwardTerminal(.error(error)) }
    }
}
