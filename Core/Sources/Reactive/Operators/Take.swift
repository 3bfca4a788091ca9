extension ObservableType {
    /// Passes on the first `count` elements, then completes and releases the source.
    ///
    /// `take(0)` completes at once without subscribing to the source.
    @inlinable
    public func take(_ count: Int) -> Observable<Element> {
        if count < 0 { return .error(RxError.argumentOutOfRange) }
        let source = asObservable()
        if count == 0 {
            return Observable { observer, lifetime in
                observer.on(.completed)
                lifetime.dispose()
            }
        }
        return Observable { observer, lifetime in
            let sink = TakeCountSink(count: count, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }

    /// Passes on elements until `duration` after subscription, then completes and releases the
    /// source. The timer is armed before the source is subscribed.
    @inlinable
    public func take(for duration: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = ForwardSink(downstream: observer, lifetime: lifetime)
            lifetime.add(scheduler.schedule(after: duration) { sink.forwardTerminal(.completed) })
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class TakeCountSink<Element>: Sink<Element> {
    @usableFromInline
    @exclusivity(unchecked)
    var remaining: Int

    @inlinable
    init(count: Int, downstream: AnyObserver<Element>, lifetime: Lifetime) {
        self.remaining = count
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next = event, !isDisposed else { return forwardEnd(event) }
        remaining -= 1
        forward(event)
        if remaining == 0 { forwardTerminal(.completed) }
    }
}
