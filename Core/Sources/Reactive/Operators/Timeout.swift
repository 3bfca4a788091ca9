extension ObservableType {
    /// Fails with `RxError.timeout` when no element arrives within `dueTime` of subscription or of
    /// the previous element.
    @inlinable
    public func timeout(_ dueTime: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        timeout(dueTime, fallback: nil, scheduler: scheduler)
    }

    /// Switches to `other` when no element arrives within `dueTime` of subscription or of the
    /// previous element; the source is released at that tick and later source events are ignored.
    @inlinable
    public func timeout<Other: ObservableType>(
        _ dueTime: RxTimeInterval, other: Other, scheduler: any SchedulerType
    ) -> Observable<Element> where Other.Element == Element {
        timeout(dueTime, fallback: other.asObservable(), scheduler: scheduler)
    }

    @inlinable
    func timeout(
        _ dueTime: RxTimeInterval, fallback: Observable<Element>?, scheduler: any SchedulerType
    ) -> Observable<Element> {
        timed { observer, lifetime in
            let sink = TimeoutSink(
                dueTime: dueTime, fallback: fallback, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            sink.armTimer()
            return sink
        }
    }
}

@usableFromInline
final class TimeoutSink<Element>: TimedSink<Element, Element> {
    @usableFromInline
    let fallback: Observable<Element>?
    @usableFromInline
    var generation = 0
    @usableFromInline
    var switched = false

    @inlinable
    init(
        dueTime: RxTimeInterval, fallback: Observable<Element>?, scheduler: any SchedulerType,
        downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.fallback = fallback
        super.init(dueTime: dueTime, scheduler: scheduler, downstream: downstream, lifetime: lifetime)
    }

    @usableFromInline
    func armTimer() {
        let current = generation
        timer.disposable = scheduler.schedule(after: dueTime) { self.timedOut(current) }
    }

    @usableFromInline
    func timedOut(_ expected: Int) {
        guard expected == generation, !switched, !isDisposed else { return }
        switched = true
        upstream.dispose()
        guard let fallback else {
            forwardTerminal(.error(RxError.timeout))
            return
        }
        fallback.subscribe(
            AnyObserver { [self] event in
                if isDisposed { return }
                if event.isStopEvent { forwardTerminal(event) } else { forward(event) }
            }, in: lifetime)
    }

    @inlinable
    override func on(_ event: Event<Element>) {
        if isDisposed || switched { return }
        switch event {
        case .next:
            generation &+= 1
            forward(event)
            if !isDisposed { armTimer() }
        case .error, .completed:
            timer.dispose()
            forwardTerminal(event)
        }
    }
}
