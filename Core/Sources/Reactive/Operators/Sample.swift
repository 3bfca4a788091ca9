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

extension ObservableType where Element: StateRepresentable {
    /// `sample(_:defaultValue:)` that keeps its state in `state` for checkpoints: the latest
    /// element, whether the source has completed, and, when `period` ticks it (every `period`,
    /// the first one period after subscription), the time left until the next tick. Restored,
    /// it goes on as if no time had passed while the run was down. Without `state` (or with
    /// `sampler` as the ticks) nothing is kept of the ticks.
    @inlinable
    public func sample(
        every period: RxTimeInterval, scheduler: any SchedulerType, defaultValue: Element? = nil,
        state: OperatorState<Element>?
    ) -> Observable<Element> {
        guard let state else {
            return sample(Observable<Int>.interval(period, scheduler: scheduler), defaultValue: defaultValue)
        }
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = SampleSink<Element>(defaultValue: defaultValue, downstream: observer, lifetime: lifetime)
            let firstTick = sink.keep(in: state, period: period, scheduler: scheduler)
            source.subscribe(AnyObserver(sink.on), in: sink.sourceLifetime)
            Observable<Int>.timer(firstTick, period: period, scheduler: scheduler).subscribe(
                AnyObserver { sink.tick($0.map { _ in () }) }, in: lifetime.makeChild())
        }
    }

    /// `sample(_:defaultValue:)` that keeps the latest element and whether the source has
    /// completed in `state`, for checkpoints.
    @inlinable
    public func sample<Sampler: ObservableType>(
        _ sampler: Sampler, defaultValue: Element? = nil, state: OperatorState<Element>?
    ) -> Observable<Element> {
        guard let state else { return sample(sampler, defaultValue: defaultValue) }
        let source = asObservable()
        let ticks = sampler.asObservable()
        return Observable { observer, lifetime in
            let sink = SampleSink<Element>(defaultValue: defaultValue, downstream: observer, lifetime: lifetime)
            _ = sink.keep(in: state, period: nil, scheduler: nil)
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
    /// With a period of its own (and a state): when its next tick is due, for checkpoints.
    @usableFromInline
    var nextTick: (due: RxTime, period: RxTimeInterval)?

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
        if let (due, period) = nextTick { nextTick = (due + period, period) }
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

extension SampleSink where Element: StateRepresentable {
    /// Takes what `state` restored and registers how a checkpoint reads this subscription; returns
    /// when its first tick is due (a period, or the time the restored one had left).
    @usableFromInline
    func keep(in state: OperatorState<Element>, period: RxTimeInterval?, scheduler: (any SchedulerType)?)
        -> RxTimeInterval
    {
        let started = scheduler?.now ?? .zero
        var firstTick = period ?? .zero
        if let restored = state.takeRestored() {
            latest = restored.stateField("latest")?.stateList?.first
            if restored.stateField("ended")?.stateInteger == 1 {
                sourceEnded = true
                sourceLifetime.dispose()
            }
            if let period, let left = restored.stateField("left")?.stateDuration {
                firstTick = min(period, max(.zero, left))
            }
        }
        // The due time of the next tick is kept, not worked out from the period: a tick due now
        // that has not fired yet (a checkpoint between two events of one instant) has no time left.
        if let period { nextTick = (started + firstTick, period) }
        state.keep(
            {
                var fields: [(String, Element)] = [
                    ("latest", Element(stateList: self.latest.map { [$0] } ?? [])),
                    ("ended", Element(stateInteger: self.sourceEnded ? 1 : 0)),
                ]
                if let scheduler, let (due, _) = self.nextTick {
                    fields.append(("left", Element(stateDuration: max(.zero, due - scheduler.now))))
                }
                return Element(stateRecord: fields)
            },
            origins: { self.latestOrigin.map { [$0] } ?? [] }, until: lifetime)
        return firstTick
    }
}
