extension ObservableType {
    /// Emits each new accumulated value: `accumulator(previous, element)`, starting from `seed`.
    ///
    /// The seed itself is never emitted (RxSwift's rule; RxJava differs). A throwing accumulator
    /// ends the sequence with its error at that element.
    @inlinable
    public func scan<Accumulate>(
        _ seed: Accumulate, accumulator: @escaping (Accumulate, Element) throws -> Accumulate
    ) -> Observable<Accumulate> {
        scan(into: seed) { accumulate, element in accumulate = try accumulator(accumulate, element) }
    }

    /// Like `scan(_:accumulator:)`, with an accumulator that updates the value in place.
    @inlinable
    public func scan<Accumulate>(
        into seed: Accumulate, accumulator: @escaping (inout Accumulate, Element) throws -> Void
    ) -> Observable<Accumulate> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = ScanSink(seed: seed, accumulator: accumulator, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class ScanSink<Element, Accumulate>: Sink<Accumulate> {
    @usableFromInline
    @exclusivity(unchecked)
    var accumulate: Accumulate
    @usableFromInline
    let accumulator: (inout Accumulate, Element) throws -> Void

    @inlinable
    init(
        seed: Accumulate, accumulator: @escaping (inout Accumulate, Element) throws -> Void,
        downstream: AnyObserver<Accumulate>, lifetime: Lifetime
    ) {
        self.accumulate = seed
        self.accumulator = accumulator
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next(let element) = event, !isDisposed else { return forwardEnd(event) }
        do {
            try accumulator(&accumulate, element)
            forward(.next(accumulate))
        } catch {
            forwardTerminal(.error(error))
        }
    }
}
