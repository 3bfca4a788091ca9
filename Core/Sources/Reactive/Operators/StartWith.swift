extension ObservableType {
    /// Emits `elements` at subscription, synchronously and in order, then the source's events.
    /// The source is subscribed in the same tick, after the elements.
    @inlinable
    public func startWith(_ elements: Element...) -> Observable<Element> {
        startWith(contentsOf: elements)
    }

    /// Emits the elements of `elements` at subscription, in order, then the source's events.
    @inlinable
    public func startWith(contentsOf elements: [Element]) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            for element in elements {
                if lifetime.isDisposed { return }
                observer.on(.next(element))
            }
            let sink = ForwardSink(downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}
