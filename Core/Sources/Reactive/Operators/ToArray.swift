extension ObservableType {
    /// Collects every element and, when the source completes, emits them as one array and
    /// completes (RxSwift's `toArray`, there a `Single`). An error ends it with no array.
    @inlinable
    public func toArray() -> Observable<[Element]> {
        reduce(into: [Element]()) { $0.append($1) }
    }

    /// `reduce` with an accumulator that updates the total in place (no copy per element).
    @inlinable
    public func reduce<Accumulate>(
        into seed: Accumulate, _ accumulator: @escaping (inout Accumulate, Element) throws -> Void
    ) -> Observable<Accumulate> {
        let source = asObservable()
        return Observable { observer, lifetime in
            var total = seed
            let sink = ReduceSink<Element, Void, Accumulate>(
                seed: (), accumulator: { _, element in try accumulator(&total, element) }, mapResult: { total },
                downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}
