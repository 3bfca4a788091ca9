extension ObservableType {
    /// Shifts every element, and completion, later by `dueTime`.
    ///
    /// Errors are not delayed: an error goes out at once and drops the elements still waiting.
    /// Disposal drops everything pending.
    @inlinable
    public func delay(_ dueTime: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        timed { DelaySink(dueTime: dueTime, scheduler: scheduler, downstream: $0, lifetime: $1) }
    }
}

extension ObservableType where Element: StateRepresentable {
    /// `delay(_:scheduler:)` that keeps its state in `state` for checkpoints: every element (and a
    /// completion) still waiting, each with the time it has left. Restored, each comes out when it
    /// had left to come.
    @inlinable
    public func delay(
        _ dueTime: RxTimeInterval, scheduler: any SchedulerType, state: OperatorState<Element>?
    ) -> Observable<Element> {
        guard let state else { return delay(dueTime, scheduler: scheduler) }
        return timed { observer, lifetime in
            let sink = DelaySink(dueTime: dueTime, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            sink.keep(in: state)
            return sink
        }
    }
}

@usableFromInline
final class DelaySink<Element>: TimedSink<Element, Element> {
    @usableFromInline
    var queue: [(due: RxTime, event: Event<Element>, origin: Origin?)] = []
    @usableFromInline
    var queueHead = 0
    @usableFromInline
    var timerArmed = false

    @inlinable
    override func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next, .completed:
            if event.isStopEvent { upstream.dispose() }
            enqueue(event, due: scheduler.now + dueTime)
        case .error:
            queue.removeAll()
            forwardTerminal(event)
        }
    }

    /// Queues an event, due at `due` (never earlier than those queued before it).
    @inlinable
    func enqueue(_ event: Event<Element>, due: RxTime) {
        queue.append((due, event, Origin.current))
        if !timerArmed {
            timerArmed = true
            // The queue carries each element's origin; the timer works for none of them.
            let wait = due - scheduler.now
            timer.disposable = Origin.with(nil) { scheduler.schedule(after: wait) { self.drain() } }
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

extension DelaySink where Element: StateRepresentable {
    /// Takes what `state` restored (the events waiting, each with the time it had left) and
    /// registers how a checkpoint reads this subscription.
    @usableFromInline
    func keep(in state: OperatorState<Element>) {
        for entry in state.takeRestored()?.stateList ?? [] {
            let left = max(.zero, entry.stateField("left")?.stateDuration ?? .zero)
            let due = max(queue.last?.due ?? .zero, scheduler.now + left)
            if let element = entry.stateField("next") {
                Origin.with(nil) { enqueue(.next(element), due: due) }
            } else {
                Origin.with(nil) { enqueue(.completed, due: due) }
            }
        }
        state.keep(
            {
                let now = self.scheduler.now
                return Element(
                    stateList: self.queue[self.queueHead...].map { entry in
                        let left = Element(stateDuration: max(.zero, entry.due - now))
                        if case .next(let element) = entry.event {
                            return Element(stateRecord: [("next", element), ("left", left)])
                        }
                        return Element(stateRecord: [("completed", Element(stateInteger: 1)), ("left", left)])
                    })
            },
            origins: { self.queue[self.queueHead...].compactMap(\.origin) }, until: lifetime)
    }
}
