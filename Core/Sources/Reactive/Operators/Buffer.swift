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
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = BufferSink<Element>(
                timeSpan: timeSpan, count: count, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            sink.startWindow()
            source.subscribe(AnyObserver(sink.on), in: sink.upstream)
        }
    }
}

@usableFromInline
final class BufferSink<Element>: Sink<[Element]> {
    @usableFromInline
    let timeSpan: RxTimeInterval
    @usableFromInline
    let count: Int
    @usableFromInline
    let scheduler: any SchedulerType
    @usableFromInline
    let upstream: Lifetime
    @usableFromInline
    let timer = SerialDisposable()
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
        self.timeSpan = timeSpan
        self.count = max(1, count)
        self.scheduler = scheduler
        self.upstream = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
        lifetime.add(timer)
    }

    @usableFromInline
    func startWindow() {
        let current = window
        // The window's timer works for no message of its own: the buffer carries its elements'.
        timer.disposable = Origin.with(nil) { scheduler.schedule(after: timeSpan) { self.windowEnded(current) } }
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
    func on(_ event: Event<Element>) {
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
