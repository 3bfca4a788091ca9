import Reactive

/// The messages behind what a sink received and has not yet flushed. The first one held asks for
/// a flush on the scheduler, after the work already queued (so a batch of elements shares one
/// flush); after it, they are let go, and so acknowledged unless something else holds them. In a
/// run that keeps checkpoints they are handed to the next checkpoint instead: a resumed run cuts
/// a `file` sink back to the last checkpoint's length, so only a committed checkpoint makes what
/// was written durable.
final class SinkOrigins {
    private let sink: any PipelineSink
    private let scheduler: any SchedulerType
    private unowned let run: PipelineRun
    private let checkpoints: Checkpoints?
    private var held: [Origin] = []

    init(sink: any PipelineSink, scheduler: any SchedulerType, run: PipelineRun, checkpoints: Checkpoints?) {
        self.sink = sink
        self.scheduler = scheduler
        self.run = run
        self.checkpoints = checkpoints
    }

    func hold(_ origin: Origin) {
        held.append(origin)
        guard held.count == 1 else { return }
        // The flush works for every message held, not for the one current now.
        Origin.with(nil) { _ = scheduler.schedule { self.flush() } }
    }

    private func flush() {
        guard !run.lifetime.isDisposed else { return }
        do {
            try (sink as? any FlushingSink)?.flush()
        } catch {
            for origin in held { origin.fail(error) }
            held = []
            run.fail(error)
            return
        }
        letGo()
    }

    /// Lets go of what is held (the run has ended and its sinks are closed).
    func release() { letGo() }

    private func letGo() {
        checkpoints?.settleAtNextCommit(held)
        held = []
    }
}

/// How a run ends, for the components that settle messages: those let go while a failed or
/// stopped run is torn down were not finished, and go back to their stream.
public final class RunEnding: @unchecked Sendable {
    /// Whether the run failed or was stopped (rather than completing).
    public internal(set) var isAbandoned = false

    /// A run that has not ended.
    public init() {}
}

/// What the run asks of sources that read a stream without end (NATS) when a signal stops it:
/// `drain` stops their reading so the stream completes and what is in flight finishes; after the
/// run, `finish` lets them send what they still owe the server (acknowledgements).
public final class SourceDrains {
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
