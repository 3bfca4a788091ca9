extension ObservableType {
    /// On error, emits `element` and completes, both in the tick of the error.
    @inlinable
    public func catchAndReturn(_ element: Element) -> Observable<Element> {
        self.catch { _ in Observable.just(element) }
    }
}
