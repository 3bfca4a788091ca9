extension ObservableType {
    /// Combines each element with the latest element of `other`; elements arriving before `other`
    /// has produced one are dropped.
    ///
    /// `other` is subscribed first. When `other` completes only it is released and its last element
    /// stays in use; its error ends the result. The result ends when this sequence does.
    @inlinable
    public func withLatestFrom<Other: ObservableType, Result>(
        _ other: Other, resultSelector: @escaping (Element, Other.Element) throws -> Result
    ) -> Observable<Result> {
        let source = asObservable()
        let second = other.asObservable()
        return Observable { observer, lifetime in
            let sink = WithLatestFromSink(resultSelector: resultSelector, downstream: observer, lifetime: lifetime)
            let otherLifetime = lifetime.makeChild()
            second.subscribe(AnyObserver { sink.onOther($0, otherLifetime) }, in: otherLifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }

    /// Emits the latest element of `other` for each element of this sequence.
    @inlinable
    public func withLatestFrom<Other: ObservableType>(_ other: Other) -> Observable<Other.Element> {
        withLatestFrom(other) { $1 }
    }
}

extension ObservableType {
    /// `withLatestFrom(_:resultSelector:)` that keeps the latest element of `other` in `state`
    /// for checkpoints: restored, the elements that come before `other` emits again are combined
    /// with it rather than dropped.
    @inlinable
    public func withLatestFrom<Other: ObservableType, Result>(
        _ other: Other, state: OperatorState<Other.Element>?,
        resultSelector: @escaping (Element, Other.Element) throws -> Result
    ) -> Observable<Result> where Other.Element: StateRepresentable {
        guard let state else { return withLatestFrom(other, resultSelector: resultSelector) }
        let source = asObservable()
        let second = other.asObservable()
        return Observable { observer, lifetime in
            let sink = WithLatestFromSink(resultSelector: resultSelector, downstream: observer, lifetime: lifetime)
            if let restored = state.takeRestored() { sink.latest = restored.stateList?.first }
            state.keep({ Other.Element(stateList: sink.latest.map { [$0] } ?? []) }, origins: { [] }, until: lifetime)
            let otherLifetime = lifetime.makeChild()
            second.subscribe(AnyObserver { sink.onOther($0, otherLifetime) }, in: otherLifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class WithLatestFromSink<Element, OtherElement, Result>: Sink<Result> {
    @usableFromInline
    let resultSelector: (Element, OtherElement) throws -> Result
    @usableFromInline
    var latest: OtherElement?

    @inlinable
    init(
        resultSelector: @escaping (Element, OtherElement) throws -> Result,
        downstream: AnyObserver<Result>, lifetime: Lifetime
    ) {
        self.resultSelector = resultSelector
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next(let element) = event, !isDisposed else { return forwardEnd(event) }
        guard let latest else { return }
        do { forward(.next(try resultSelector(element, latest))) } catch { forwardTerminal(.error(error)) }
    }

    @usableFromInline
    func onOther(_ event: Event<OtherElement>, _ otherLifetime: Lifetime) {
        if isDisposed || otherLifetime.isDisposed { return }
        switch event {
        case .next(let element): latest = element
        case .error(let error): forwardTerminal(.error(error))
        case .completed: otherLifetime.dispose()
        }
    }
}
