extension ObservableType {
    /// Emits at most one element per `dueTime`: the first at once, and (with `latest`, the default)
    /// the latest element of the window when the window ends.
    ///
    /// An element arriving at least `dueTime` after the last emission goes out at once and drops
    /// any pending one. With a pending element, completion waits for it to go out first. An error
    /// drops the pending element.
    @inlinable
    public func throttle(
        _ dueTime: RxTimeInterval, latest: Bool = true, scheduler: any SchedulerType
    ) -> Observable<Element> {
        timed { ThrottleSink(dueTime: dueTime, latest: latest, scheduler: scheduler, downstream: $0, lifetime: $1) }
    }
}

extension ObservableType where Element: StateRepresentable {
    /// `throttle(_:latest:scheduler:)` that keeps its state in `state` for checkpoints: how long
    /// ago it last sent an element, and the element waiting for the window's end.
    @inlinable
    public func throttle(
        _ dueTime: RxTimeInterval, latest: Bool = true, scheduler: any SchedulerType, state: OperatorState<Element>?
    ) -> Observable<Element> {
        guard let state else { return throttle(dueTime, latest: latest, scheduler: scheduler) }
        return timed { observer, lifetime in
            let sink = ThrottleSink(
                dueTime: dueTime, latest: latest, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            sink.keep(in: state)
            return sink
        }
    }
}

@usableFromInline
final class ThrottleSink<Element>: TimedSink<Element, Element> {
    @usableFromInline
    let latest: Bool
    @usableFromInline
    var lastSentTime: RxTime?
    @usableFromInline
    var pending: Element?
    @usableFromInline
    var pendingOrigin: Origin?
    @usableFromInline
    var completionPending = false

    @inlinable
    init(
        dueTime: RxTimeInterval, latest: Bool, scheduler: any SchedulerType,
        downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.latest = latest
        super.init(dueTime: dueTime, scheduler: scheduler, downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    override func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            let remaining: RxTimeInterval
            if let lastSentTime {
                remaining = dueTime - (scheduler.now - lastSentTime)
            } else {
                remaining = .zero
            }
            if remaining <= .zero {
                sendNow(element)
                return
            }
            guard latest else { return }
            let alreadyArmed = pending != nil
            pending = element
            pendingOrigin = Origin.current
            if alreadyArmed { return }
            timer.disposable = scheduler.schedule(after: remaining) { self.propagate() }
        case .error:
            pending = nil
            pendingOrigin = nil
            forwardTerminal(event)
        case .completed:
            upstream.dispose()
            if pending != nil {
                completionPending = true
            } else {
                forwardTerminal(.completed)
            }
        }
    }

    @inlinable
    func sendNow(_ element: Element) {
        pending = nil
        // A pending element superseded by one sent at once is dropped, and its message let go.
        pendingOrigin = nil
        forward(.next(element))
        lastSentTime = scheduler.now
    }

    @usableFromInline
    func propagate() {
        if isDisposed { return }
        if let element = pending {
            // The trailing element goes out on behalf of its own message, not the one that armed the timer.
            if let origin = pendingOrigin {
                pendingOrigin = nil
                Origin.with(origin) { sendNow(element) }
            } else {
                sendNow(element)
            }
        }
        if completionPending { forwardTerminal(.completed) }
    }
}

extension ThrottleSink where Element: StateRepresentable {
    /// Takes what `state` restored (how long ago the last element went, the one waiting) and
    /// registers how a checkpoint reads this subscription.
    @usableFromInline
    func keep(in state: OperatorState<Element>) {
        if let restored = state.takeRestored(), let since = restored.stateField("since")?.stateDuration {
            lastSentTime = scheduler.now - since
            if let element = restored.stateField("pending") {
                pending = element
                armRestored(at: scheduler.now + max(.zero, dueTime - since)) { self.propagate() }
            }
        }
        state.keep(
            {
                var fields: [(String, Element)] = []
                if let lastSentTime = self.lastSentTime {
                    fields.append(("since", Element(stateDuration: self.scheduler.now - lastSentTime)))
                }
                if let pending = self.pending { fields.append(("pending", pending)) }
                return Element(stateRecord: fields)
            },
            origins: { (self.pending != nil ? self.pendingOrigin : nil).map { [$0] } ?? [] }, until: lifetime)
    }
}
