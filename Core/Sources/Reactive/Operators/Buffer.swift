extension ObservableType {
    /// Collects elements into arrays, emitted when `count` elements arrived or every `timeSpan`,
    /// whichever comes first; the timer restarts after each emission.
    ///
    /// A timer emission happens even for an empty buffer (`[]`). Completion emits the current
    /// buffer, even empty, then completes; an error discards it.
    @inlinable
    public func buffer(
        timeSpan: RxTimeInterval, count: Int, scheduler: any SchedulerType
    ) -> Observable<[Element]> {
        timed { observer, lifetime in
            let sink = BufferSink(
                timeSpan: timeSpan, count: count, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            sink.startWindow()
            return sink
        }
    }
}

extension ObservableType where Element: StateRepresentable {
    /// `buffer(timeSpan:count:scheduler:)` that keeps its state in `state` for checkpoints: the
    /// list it is collecting and the time left in its window. Restored, the window ends when it
    /// had left to end.
    @inlinable
    public func buffer(
        timeSpan: RxTimeInterval, count: Int, scheduler: any SchedulerType, state: OperatorState<Element>?
    ) -> Observable<[Element]> {
        guard let state else { return buffer(timeSpan: timeSpan, count: count, scheduler: scheduler) }
        return timed { observer, lifetime in
            let sink = BufferSink(
                timeSpan: timeSpan, count: count, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            sink.keep(in: state)
            return sink
        }
    }
}

@usableFromInline
final class BufferSink<Element>: TimedSink<Element, [Element]> {
    @usableFromInline
    let count: Int
    @usableFromInline
    var buffer: [Element] = []
    @usableFromInline
    var window = 0
    @usableFromInline
    var held = HeldOrigins()

    @inlinable
    init(
        timeSpan: RxTimeInterval, count: Int, scheduler: any SchedulerType,
        downstream: AnyObserver<[Element]>, lifetime: Lifetime
    ) {
        self.count = max(1, count)
        super.init(dueTime: timeSpan, scheduler: scheduler, downstream: downstream, lifetime: lifetime)
    }

    @usableFromInline
    var windowEnd: RxTime = .zero

    @usableFromInline
    func startWindow() {
        startWindow(lasting: dueTime)
    }

    @usableFromInline
    func startWindow(lasting length: RxTimeInterval) {
        let current = window
        windowEnd = scheduler.now + length
        // The window's timer works for no message of its own: the buffer carries its elements'.
        timer.disposable = Origin.with(nil) { scheduler.schedule(after: length) { self.windowEnded(current) } }
    }

    @usableFromInline
    func windowEnded(_ expected: Int) {
        guard expected == window, !isDisposed else { return }
        emitAndRestart()
    }

    @usableFromInline
    func emitAndRestart() {
        window &+= 1
        let full = buffer
        buffer = []
        Origin.with(held.take()) { forward(.next(full)) }
        if !isDisposed { startWindow() }
    }

    @inlinable
    override func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            buffer.append(element)
            held.keepCurrent()
            if buffer.count >= count { emitAndRestart() }
        case .error(let error):
            buffer = []
            held = HeldOrigins()
            forwardTerminal(.error(error))
        case .completed:
            let last = buffer
            buffer = []
            Origin.with(held.take()) { forward(.next(last)) }
            forwardTerminal(.completed)
        }
    }
}

extension BufferSink where Element: StateRepresentable {
    /// Takes what `state` restored (the list collected and the time its window had left), starts
    /// the window, and registers how a checkpoint reads this subscription.
    @usableFromInline
    func keep(in state: OperatorState<Element>) {
        let restored = state.takeRestored()
        buffer = restored?.stateField("items")?.stateList ?? []
        startWindow(lasting: max(.zero, restored?.stateField("left")?.stateDuration ?? dueTime))
        state.keep(
            {
                return Element(stateRecord: [
                    ("items", Element(stateList: self.buffer)),
                    ("left", Element(stateDuration: max(.zero, self.windowEnd - self.scheduler.now))),
                ])
            },
            origins: { self.held.all }, until: lifetime)
    }
}
