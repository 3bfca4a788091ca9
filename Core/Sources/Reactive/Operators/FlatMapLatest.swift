extension ObservableType {
    /// Maps each element to an inner observable and mirrors only the latest inner.
    ///
    /// When an element arrives the selector runs, then the previous inner is released, then the
    /// new one is subscribed, all in that tick. The result completes when the source has completed
    /// and the current inner (if any) has completed. Any error ends it at once.
    @inlinable
    public func flatMapLatest<Inner: ObservableType>(
        _ selector: @escaping (Element) throws -> Inner
    ) -> Observable<Inner.Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = FlatMapLatestSink<Element, Inner.Element>(
                selector: { try selector($0).asObservable() }, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: sink.outerLifetime)
        }
    }
}

extension ObservableType where Element: ObservableType {
    /// Mirrors the latest inner observable this sequence emitted (`flatMapLatest` with identity).
    @inlinable
    public func switchLatest() -> Observable<Element.Element> {
        flatMapLatest { $0 }
    }
}

@usableFromInline
final class FlatMapLatestSink<Element, InnerElement>: Sink<InnerElement> {
    @usableFromInline
    let selector: (Element) throws -> Observable<InnerElement>
    @usableFromInline
    let outerLifetime: Lifetime
    @usableFromInline
    var innerLifetime: Lifetime?
    @usableFromInline
    var outerCompleted = false

    @inlinable
    init(
        selector: @escaping (Element) throws -> Observable<InnerElement>,
        downstream: AnyObserver<InnerElement>, lifetime: Lifetime
    ) {
        self.selector = selector
        self.outerLifetime = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            let inner: Observable<InnerElement>
            do {
                inner = try selector(element)
            } catch {
                forwardTerminal(.error(error))
                return
            }
            innerLifetime?.dispose()
            let current = lifetime.makeChild()
            innerLifetime = current
            inner.subscribe(AnyObserver { self.onInner($0, current) }, in: current)
        case .error(let error):
            forwardTerminal(.error(error))
        case .completed:
            outerLifetime.dispose()
            outerCompleted = true
            if innerLifetime == nil { forwardTerminal(.completed) }
        }
    }

    @usableFromInline
    func onInner(_ event: Event<InnerElement>, _ current: Lifetime) {
        if isDisposed || current.isDisposed { return }
        switch event {
        case .next:
            forward(event)
        case .error:
            forwardTerminal(event)
        case .completed:
            current.dispose()
            if innerLifetime === current { innerLifetime = nil }
            if outerCompleted { forwardTerminal(.completed) }
        }
    }
}
