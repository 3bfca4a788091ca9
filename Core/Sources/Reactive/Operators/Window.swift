extension ObservableType {
    /// Splits the elements into windows, each an observable, closed when it holds `count` elements
    /// or `timeSpan` after it opened, whichever comes first (RxSwift's `window(timeSpan:count:)`).
    ///
    /// The first window is emitted at subscription, before the source is subscribed; closing a
    /// window opens the next at once and restarts the timer. A window only sends what arrives while
    /// it is subscribed. The source's completion or error closes the current window with it, then
    /// ends the result. The source stays subscribed while the result or any window is.
    @inlinable
    public func window(timeSpan: RxTimeInterval, count: Int, scheduler: any SchedulerType) -> Observable<
        Observable<Element>
    > {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = WindowSink<Element>(
                timeSpan: timeSpan, count: count, scheduler: scheduler, downstream: observer, lifetime: lifetime)
            lifetime.onDispose { sink.sourceLifetime.ownerDidEnd() }
            sink.openWindow()
            sink.armTimer()
            source.subscribe(AnyObserver(sink.on), in: sink.sourceLifetime.lifetime)
        }
    }
}

@usableFromInline
final class WindowSink<Element>: Sink<Observable<Element>> {
    @usableFromInline
    let timeSpan: RxTimeInterval
    @usableFromInline
    let count: Int
    @usableFromInline
    let scheduler: any SchedulerType
    @usableFromInline
    let sourceLifetime = RefCountLifetime()
    @usableFromInline
    var current = PublishSubject<Element>()
    @usableFromInline
    var counted = 0
    @usableFromInline
    let timer = SerialDisposable()

    @inlinable
    init(
        timeSpan: RxTimeInterval, count: Int, scheduler: any SchedulerType,
        downstream: AnyObserver<Observable<Element>>, lifetime: Lifetime
    ) {
        self.timeSpan = timeSpan
        self.count = count
        self.scheduler = scheduler
        super.init(downstream: downstream, lifetime: lifetime)
        sourceLifetime.lifetime.add(timer)
    }

    /// Emits the current window, held open for its subscribers by the source's lifetime.
    @inlinable
    func openWindow() {
        if isDisposed { return }
        let refCount = sourceLifetime
        let published = current.asObservable()
        forward(
            .next(
                Observable { observer, windowLifetime in
                    refCount.hold(until: windowLifetime)
                    published.subscribe(observer, in: windowLifetime)
                }))
    }

    @inlinable
    func armTimer() {
        timer.disposable = scheduler.schedule(after: timeSpan) { [weak self] in
            guard let self else { return }
            self.closeAndOpen()
            self.armTimer()
        }
    }

    @inlinable
    func closeAndOpen() {
        current.on(.completed)
        current = PublishSubject()
        counted = 0
        openWindow()
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if sourceLifetime.lifetime.isDisposed { return }
        switch event {
        case .next(let element):
            current.on(.next(element))
            counted += 1
            if counted == count {
                closeAndOpen()
                armTimer()
            }
        case .error(let error):
            current.on(.error(error))
            forwardTerminal(.error(error))
            sourceLifetime.lifetime.dispose()
        case .completed:
            current.on(.completed)
            forwardTerminal(.completed)
            sourceLifetime.lifetime.dispose()
        }
    }
}
