extension ObservableType {
    /// Emits an element only after `dueTime` has passed without another element.
    ///
    /// Each element replaces the pending one and restarts the timer. Completion emits the pending
    /// element at once, then completes; an error drops it; disposal drops it and the timer.
    @inlinable
    public func debounce(_ dueTime: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        timed { DebounceSink(dueTime: dueTime, scheduler: scheduler, downstream: $0, lifetime: $1) }
    }
}

extension ObservableType where Element: StateRepresentable {
    /// `debounce(_:scheduler:)` that keeps its state in `state` for checkpoints: the pending
    /// element and the time left until it is due. Restored, it goes on as if no time had passed
    /// while the run was down.
    @inlinable
    public func debounce(
        _ dueTime: RxTimeInterval, scheduler: any SchedulerType, state: OperatorState<Element>?
    ) -> Observable<Element> {
        guard let state else { return debounce(dueTime, scheduler: scheduler) }
        return timed { observer, lifetime in
            let sink = DebounceSink(dueTime: dueTime, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            sink.keep(in: state)
            return sink
        }
    }
}

@usableFromInline
final class DebounceSink<Element>: TimedSink<Element, Element> {
    @usableFromInline
    var pending: Element?
    @usableFromInline
    var pendingOrigin: Origin?
    @usableFromInline
    var generation = 0
    @usableFromInline
    var due: RxTime = .zero

    @inlinable
    override func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            pending = element
            pendingOrigin = Origin.current
            arm(after: dueTime)
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
    func arm(after delay: RxTimeInterval) {
        generation &+= 1
        let current = generation
        due = scheduler.now + delay
        timer.disposable = scheduler.schedule(after: delay) { self.fire(current) }
    }

    @usableFromInline
    func fire(_ expected: Int) {
        guard expected == generation, !isDisposed, let element = pending else { return }
        pending = nil
        pendingOrigin = nil
        forward(.next(element))
    }
}

extension DebounceSink where Element: StateRepresentable {
    /// Takes what `state` restored (a pending element and the time it had left) and registers how
    /// a checkpoint reads this subscription.
    @usableFromInline
    func keep(in state: OperatorState<Element>) {
        if let restored = state.takeRestored(), let element = restored.stateField("pending") {
            pending = element
            generation &+= 1
            let current = generation
            due = scheduler.now + max(.zero, restored.stateField("left")?.stateDuration ?? .zero)
            armRestored(at: due) { self.fire(current) }
        }
        state.keep(
            {
                guard let pending = self.pending else { return Element(stateRecord: []) }
                return Element(stateRecord: [
                    ("pending", pending),
                    ("left", Element(stateDuration: max(.zero, self.due - self.scheduler.now))),
                ])
            },
            origins: { self.pendingOrigin.map { [$0] } ?? [] }, until: lifetime)
    }
}
