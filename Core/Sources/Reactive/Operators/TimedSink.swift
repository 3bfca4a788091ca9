/// What the sinks of the timed operators (debounce, delay, throttle, timeout, buffer) share: a
/// due time on a scheduler, one timer, and the source's subscription apart from the sink's own
/// lifetime, so that completion can release the source while a timer still has work to do.
@usableFromInline
class TimedSink<Element, Output>: Sink<Output> {
    @usableFromInline
    final let dueTime: RxTimeInterval
    @usableFromInline
    final let scheduler: any SchedulerType
    /// The source's subscription, a child of the sink's lifetime.
    @usableFromInline
    final let upstream: Lifetime
    /// The pending timer: setting another cancels it.
    @usableFromInline
    final let timer = SerialDisposable()

    @inlinable
    init(dueTime: RxTimeInterval, scheduler: any SchedulerType, downstream: AnyObserver<Output>, lifetime: Lifetime) {
        self.dueTime = dueTime
        self.scheduler = scheduler
        self.upstream = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
        lifetime.add(timer)
    }

    /// Takes one event of the source; every timed sink says what it does.
    @inlinable
    func on(_ event: Event<Element>) {
        preconditionFailure("\(Self.self) takes its source's events")
    }
}

extension ObservableType {
    /// This source read by the timed sink `make` builds (and starts: restoring a checkpoint's
    /// state, arming a first timer) for each subscription.
    @inlinable
    func timed<Output, TimedOperator: TimedSink<Element, Output>>(
        _ make: @escaping (AnyObserver<Output>, Lifetime) -> TimedOperator
    ) -> Observable<Output> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = make(observer, lifetime)
            source.subscribe(AnyObserver(sink.on), in: sink.upstream)
        }
    }
}
