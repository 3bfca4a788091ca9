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

    /// A timer a checkpoint restored, set only once the source is subscribed (`sourceSubscribed`).
    @usableFromInline
    final var restoredTimer: (due: RxTime, action: () -> Void)?

    /// Sets `action` for `due` once the source is subscribed, unless the sink set a timer first.
    /// In the run that took the checkpoint this timer was set by an element, after whatever the
    /// source scheduled as it was subscribed (a timeline's entries): set after them again, it
    /// comes after the one due at the same time, as it did then.
    @inlinable
    final func armRestored(at due: RxTime, _ action: @escaping () -> Void) {
        restoredTimer = (due, action)
    }

    /// The source is subscribed: sets the restored timer, if any.
    @inlinable
    final func sourceSubscribed() {
        guard let restored = restoredTimer else { return }
        restoredTimer = nil
        guard !isDisposed, timer.disposable == nil else { return }
        // The timer works for no message of its own.
        timer.disposable = Origin.with(nil) {
            scheduler.schedule(after: max(.zero, restored.due - scheduler.now), restored.action)
        }
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
            sink.sourceSubscribed()
        }
    }
}
