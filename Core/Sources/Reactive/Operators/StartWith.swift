extension ObservableType {
    /// Emits `elements` at subscription, synchronously and in order, then the source's events.
    @inlinable
    public func startWith(_ elements: Element...) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            for element in elements {
                if lifetime.isDisposed { return }
                observer.on(.next(element))
            }
            source.subscribe(observer, in: lifetime)
        }
    }
}
