extension ObservableType {
    /// Shifts every element, and completion, later by `dueTime`.
    ///
    /// Errors are not delayed: an error goes out at once and drops the elements still waiting.
    /// Disposal drops everything pending.
    @inlinable
    public func delay(_ dueTime: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = DelaySink(dueTime: dueTime, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: sink.upstream)
        }
    }
}

@usableFromInline
final class DelaySink<Element>: Sink<Element> {
    @usableFromInline
    let dueTime: RxTimeInterval
    @usableFromInline
    let scheduler: any SchedulerType
    @usableFromInline
    let upstream: Lifetime
    @usableFromInline
    let timer = SerialDisposable()
    @usableFromInline
    var queue: [(due: RxTime, event: Event<Element>, origin: Origin?)] = []
    @usableFromInline
    var queueHead = 0
    @usableFromInline
    var timerArmed = false

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
        case .next, .completed:
            if event.isStopEvent { upstream.dispose() }
            queue.append((scheduler.now + dueTime, event, Origin.current))
            if !timerArmed {
                timerArmed = true
                // The queue carries each element's origin; the timer works for none of them.
                timer.disposable = Origin.with(nil) { scheduler.schedule(after: dueTime) { self.drain() } }
            }
        case .error:
            queue.removeAll()
            forwardTerminal(event)
        }
    }

    @usableFromInline
    func drain() {
        timerArmed = false
        let now = scheduler.now
        while queueHead < queue.count, queue[queueHead].due <= now {
            if isDisposed { return }
            let (_, event, origin) = queue[queueHead]
            // The slot stays until the queue is compacted; its origin goes now.
            if origin != nil { queue[queueHead].origin = nil }
            queueHead += 1
            if event.isStopEvent {
                forwardTerminal(event)
                return
            }
            // Each element goes out on behalf of its own message.
            if let origin { Origin.with(origin) { forward(event) } } else { forward(event) }
        }
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        } else if !isDisposed {
            timerArmed = true
            let wait = queue[queueHead].due - now
            timer.disposable = Origin.with(nil) { scheduler.schedule(after: wait) { self.drain() } }
        }
    }
}
