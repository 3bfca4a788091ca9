extension ObservableType {
    /// Emits an element only after `dueTime` has passed without another element.
    ///
    /// Each element replaces the pending one and restarts the timer. Completion emits the pending
    /// element at once, then completes; an error drops it; disposal drops it and the timer.
    @inlinable
    public func debounce(_ dueTime: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = DebounceSink(dueTime: dueTime, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: sink.upstream)
        }
    }
}

@usableFromInline
final class DebounceSink<Element>: Sink<Element> {
    @usableFromInline
    let dueTime: RxTimeInterval
    @usableFromInline
    let scheduler: any SchedulerType
    @usableFromInline
    let upstream: Lifetime
    @usableFromInline
    let timer = SerialDisposable()
    @usableFromInline
    var pending: Element?
    @usableFromInline
    var pendingOrigin: Origin?
    @usableFromInline
    var generation = 0

    @inlinable
    init(dueTime: RxTimeInterval, scheduler: any SchedulerType, downstream: AnyObserver<Element>, lifetime: Lifetime) {
        self.dueTime = dueTime
        self.scheduler = scheduler
        self.upstream = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
        lifetime.add(timer)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            pending = element
            pendingOrigin = Origin.current
            generation &+= 1
            let current = generation
            timer.disposable = scheduler.schedule(after: dueTime) { self.fire(current) }
        case .error:
            pending = nil
            pendingOrigin = nil
            forwardTerminal(event)
        case .completed:
            upstream.dispose()
            if let element = pending {
                pending = nil
                // Emitted at completion on behalf of its own message.
                let origin = pendingOrigin
                pendingOrigin = nil
                Origin.with(origin) { forward(.next(element)) }
            }
            forwardTerminal(.completed)
        }
    }

    @usableFromInline
    func fire(_ expected: Int) {
        guard expected == generation, !isDisposed, let element = pending else { return }
        pending = nil
        pendingOrigin = nil
        forward(.next(element))
    }
}
