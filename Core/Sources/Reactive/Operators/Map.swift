extension ObservableType {
    /// Transforms each element with `transform`.
    ///
    /// A throwing transform ends the sequence with its error at that element.
    @inlinable
    public func map<Result>(_ transform: @escaping (Element) throws -> Result) -> Observable<Result> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = MapSink(transform: transform, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class MapSink<Element, Result>: Sink<Result> {
    @usableFromInline
    let transform: (Element) throws -> Result

    @inlinable
    init(transform: @escaping (Element) throws -> Result, downstream: AnyObserver<Result>, lifetime: Lifetime) {
        self.transform = transform
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next(let element) = event, !isDisposed else { return forwardEnd(event) }
        do { forward(.next(try transform(element))) } catch { forwardTerminal(.error(error)) }
    }
}
