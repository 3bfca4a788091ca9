extension ObservableType {
    /// Drops the first `count` elements; terminal events always pass.
    @inlinable
    public func skip(_ count: Int) -> Observable<Element> {
        if count < 0 { return .error(RxError.argumentOutOfRange) }
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = SkipSink(remaining: count, isOpen: count == 0, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }

    /// Drops elements until `duration` after subscription; terminal events always pass.
    @inlinable
    public func skip(for duration: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = SkipSink(remaining: Int.max, isOpen: false, downstream: observer, lifetime: lifetime)
            lifetime.add(scheduler.schedule(after: duration) { sink.isOpen = true })
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class SkipSink<Element>: Sink<Element> {
    @usableFromInline
    var remaining: Int
    @usableFromInline
    var isOpen: Bool

    @inlinable
    init(remaining: Int, isOpen: Bool, downstream: AnyObserver<Element>, lifetime: Lifetime) {
        self.remaining = remaining
        self.isOpen = isOpen
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next = event, !isDisposed else { return forwardEnd(event) }
        if isOpen {
            forward(event)
        } else if remaining != Int.max {
            remaining -= 1
            if remaining == 0 { isOpen = true }
        }
    }
}
