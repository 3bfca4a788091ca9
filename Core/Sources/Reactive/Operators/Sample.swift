extension ObservableType {
    /// On each element or completion of `sampler`, emits the latest element of this sequence
    /// since the previous tick, if there is one (else `defaultValue`, if given) — RxSwift's
    /// `sample`.
    ///
    /// The source's completion ends nothing at once: the result completes at the sampler's next
    /// tick, after emitting what is pending. The sampler's completion is a last tick: it emits
    /// what is pending, and completes the result only if the source has completed (else, as in
    /// RxSwift, the result stays open). An error of either ends the result at once.
    @inlinable
    public func sample<Sampler: ObservableType>(_ sampler: Sampler, defaultValue: Element? = nil) -> Observable<
        Element
    > {
        let source = asObservable()
        let ticks = sampler.asObservable()
        return Observable { observer, lifetime in
            let sink = SampleSink<Element>(defaultValue: defaultValue, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: sink.sourceLifetime)
            ticks.subscribe(AnyObserver { sink.tick($0.map { _ in () }) }, in: lifetime.makeChild())
        }
    }
}

@usableFromInline
final class SampleSink<Element>: Sink<Element> {
    @usableFromInline
    let defaultValue: Element?
    @usableFromInline
    var latest: Element?
    @usableFromInline
    var latestOrigin: Origin?
    @usableFromInline
    var sourceEnded = false
    @usableFromInline
    let sourceLifetime: Lifetime

    @inlinable
    init(defaultValue: Element?, downstream: AnyObserver<Element>, lifetime: Lifetime) {
        self.defaultValue = defaultValue
        self.sourceLifetime = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            latest = element
            latestOrigin = Origin.current
        case .error: forwardTerminal(event)
        case .completed:
            sourceEnded = true
            sourceLifetime.dispose()
        }
    }

    @inlinable
    func tick(_ event: Event<Void>) {
        if isDisposed { return }
        switch event {
        case .next, .completed:
            if let element = latest ?? defaultValue {
                latest = nil
                // The sampled element goes out on behalf of its own message, joined to the tick's.
                let origin = Origin.joining(Origin.current, latestOrigin)
                latestOrigin = nil
                Origin.with(origin) { forward(.next(element)) }
            }
            if sourceEnded { forwardTerminal(.completed) }
        case .error(let error):
            forwardTerminal(.error(error))
        }
    }
}
