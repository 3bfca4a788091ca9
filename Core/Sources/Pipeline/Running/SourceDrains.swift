import Reactive

/// What the run asks of sources that read a stream without end (NATS) when a signal stops it:
/// `drain` stops their reading so the stream completes and what is in flight finishes; after the
/// run, `finish` lets them send what they still owe the server (acknowledgements).
@_spi(Components) public final class SourceDrains {
    /// The drains not yet run, by the order they were added in.
    private var drains: [Int: () -> Void] = [:]
    private var finishers: [() -> Void] = []
    /// How many drains were ever added (the next one's number).
    private var added = 0

    /// None yet.
    public init() {}

    /// Adds a source's drain.
    public func add(_ drain: @escaping () -> Void) {
        _ = register(drain)
    }

    private func register(_ drain: @escaping () -> Void) -> Int {
        drains[added] = drain
        added += 1
        return added - 1
    }

    /// `source`, which a drain completes (as if it had ended: what operators hold, open windows,
    /// is emitted and written) unless the source added a drain of its own while it subscribed
    /// (`nats` and `httpServer` stop reading and finish what is in flight first).
    public func completing(_ source: Observable<Value>) -> Observable<Value> {
        Observable { [weak self] observer, lifetime in
            let reading = lifetime.makeChild()
            let before = self?.added
            source.subscribe(observer, in: reading)
            guard let self, before == added, !lifetime.isDisposed else { return }
            let number = register {
                guard !lifetime.isDisposed else { return }
                reading.dispose()
                observer.on(.completed)
            }
            // Let go of with the subscription: the drain holds the pipeline downstream.
            lifetime.onDispose { [weak self] in self?.drains[number] = nil }
        }
    }

    /// Adds what a source does once the run has ended.
    public func atEnd(_ finish: @escaping () -> Void) { finishers.append(finish) }

    /// Drains every source; false when there is none to drain (the run is then stopped at once).
    public func drain() -> Bool {
        let pending = drains.sorted { $0.key < $1.key }.map(\.value)
        drains = [:]
        for drain in pending { drain() }
        return !pending.isEmpty
    }

    /// Runs what sources do at the end, once.
    public func finish() {
        let pending = finishers
        finishers = []
        for finish in pending { finish() }
    }
}
