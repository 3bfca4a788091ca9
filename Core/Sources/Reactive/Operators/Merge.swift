extension Observable {
    /// Merges the sources: all are subscribed at subscription, in order, and the result completes
    /// when all have completed (at once if there are none). Any error ends it at once.
    @inlinable
    public static func merge(_ sources: [Observable<Element>]) -> Observable<Element> {
        Observable<Observable<Element>>.from(sources).merge()
    }

    /// Merges the sources; see `merge(_:)` with an array.
    @inlinable
    public static func merge(_ sources: Observable<Element>...) -> Observable<Element> {
        merge(sources)
    }
}

extension ObservableType {
    /// Merges this sequence with `others`.
    @inlinable
    public func merge(with others: Observable<Element>...) -> Observable<Element> {
        Observable.merge([asObservable()] + others)
    }
}

extension ObservableType where Element: ObservableType {
    /// Merges the inner observables this sequence emits (at most `maxConcurrent` at once; nil: no
    /// limit). The result completes when this sequence and every inner have completed.
    @inlinable
    public func merge(maxConcurrent: Int? = nil) -> Observable<Element.Element> {
        flatMap(maxConcurrent: maxConcurrent) { $0 }
    }
}
