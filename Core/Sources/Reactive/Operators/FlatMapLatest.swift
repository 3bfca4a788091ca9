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
final class FlatMapLatestSink<Element, InnerElement>: InnerSubscribingSink<Element, InnerElement> {
    @usableFromInline
    var innerLifetime: Lifetime?

    @inlinable
    override init(
        selector: @escaping (Element) throws -> Observable<InnerElement>,
        downstream: AnyObserver<InnerElement>, lifetime: Lifetime
    ) {
        super.init(selector: selector, downstream: downstream, lifetime: lifetime)
    }

    @usableFromInline
    override func accept(_ inner: Observable<InnerElement>) {
        innerLifetime?.dispose()
        let current = lifetime.makeChild()
        innerLifetime = current
        inner.subscribe(AnyObserver { self.onInner($0, current) }, in: current)
    }

    @usableFromInline
    override func outerDidComplete() {
        if innerLifetime == nil { forwardTerminal(.completed) }
    }

    @usableFromInline
    override func innerDidComplete(_ current: Lifetime) {
        if innerLifetime === current { innerLifetime = nil }
        if outerCompleted { forwardTerminal(.completed) }
    }
}
