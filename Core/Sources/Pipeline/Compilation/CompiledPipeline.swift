import Reactive

/// A pipeline built into observables on one scheduler, ready to start.
@_spi(Host) public final class CompiledPipeline {
    /// A sink and the stream it reads.
    public struct CompiledSink {
        /// The sink's component name.
        public let name: String
        /// Where it is in the file.
        public let location: SourceLocation
        /// The stream it reads.
        public let streamName: String
        /// The sink.
        public let sink: any PipelineSink
        /// What it reads.
        public let input: Observable<Value>
        /// Its side streams (`errors`), ended when it has finished.
        var sideStreams: [PublishSubject<Value>] = []
        /// Whether what it reads comes from a side stream, directly or through other streams.
        var readsSideStreams = false
        /// Counts what it receives, in a watched run.
        var meter: ComponentMeter? = nil
    }

    /// The built streams by name (side streams too, as `NAME.side`).
    public let streams: [String: Observable<Value>]
    /// The sinks, in file order.
    public let sinks: [CompiledSink]
    let multicasts: [Multicast]
    let states: [SideStreamState]
    /// The elements components dropped under `onError: skip`, for the run's summary.
    public let skipped: SkippedElements
    let scheduler: (any SchedulerType)?
    let ending: RunEnding
    /// The sources that can be drained on a signal.
    public let drains: SourceDrains
    /// The run's checkpoints, when it keeps state: what sinks wrote is settled at the next commit.
    let checkpoints: Checkpoints?

    init(
        streams: [String: Observable<Value>], sinks: [CompiledSink], multicasts: [Multicast],
        states: [SideStreamState] = [], skipped: SkippedElements = SkippedElements(),
        scheduler: (any SchedulerType)? = nil, ending: RunEnding = RunEnding(), drains: SourceDrains = SourceDrains(),
        checkpoints: Checkpoints? = nil
    ) {
        self.checkpoints = checkpoints
        self.ending = ending
        self.drains = drains
        self.skipped = skipped
        self.scheduler = scheduler
        self.streams = streams
        self.sinks = sinks
        self.multicasts = multicasts
        self.states = states
    }

    /// Subscribes every sink, then connects the shared streams (most downstream first), so no
    /// reader misses what a synchronous source emits. `onFinish` runs once: when every sink's
    /// stream has ended, at the first error, or on `dispose()`.
    public func start(onFinish: @escaping (PipelineRun.Outcome) -> Void = { _ in }) -> PipelineRun {
        let run = PipelineRun(sinks: sinks.map(\.sink), ending: ending, onFinish: onFinish)
        for state in states { state.follow(in: run.lifetime) }
        // Readers of side streams first (directly or through other streams), so they see what the
        // main streams cause.
        func early(_ sink: CompiledSink) -> Int { sink.streamName.contains(".") ? 0 : sink.readsSideStreams ? 1 : 2 }
        let order = sinks.indices.sorted { early(sinks[$0]) < early(sinks[$1]) }
        for index in order {
            let compiled = sinks[index]
            let lifetime = run.lifetime.makeChild()
            if let asynchronous = compiled.sink as? any AsynchronousSink {
                asynchronous.start { error in if !run.lifetime.isDisposed { run.fail(error) } }
            }
            let isSideStream = compiled.streamName.contains(".")
            if !isSideStream { run.pendingSinks += 1 }
            let origins =
                compiled.sink is any OriginKeepingSink
                ? nil
                : scheduler.map { SinkOrigins(sink: compiled.sink, scheduler: $0, run: run, checkpoints: checkpoints) }
            if let origins { run.sinkOrigins.append(origins) }
            compiled.input.subscribe(
                Self.observer(
                    for: compiled, run: run, lifetime: lifetime, origins: origins, isSideStream: isSideStream),
                in: lifetime)
        }
        for multicast in multicasts.reversed() { multicast.connect(in: run.lifetime) }
        run.checkFinished()
        return run
    }

    /// What a sink's stream is subscribed with: a strong capture (a weak one costs a load per
    /// event; the cycle through the run's lifetime is broken when the run ends).
    private static func observer(
        for compiled: CompiledSink, run: PipelineRun, lifetime: Lifetime, origins: SinkOrigins?, isSideStream: Bool
    ) -> AnyObserver<Value> {
        // The run's lifetime, read per event, is captured itself: the run may be weakly referenced
        // (by the checkpoints' failure handler), and reaching it per event took the slow path of
        // reference counting.
        let runLifetime = run.lifetime
        // The sink and its meter captured apart: read out of `compiled` per event, each was a
        // copy (a reference count taken and given back for every element written).
        let (sink, meter) = (compiled.sink, compiled.meter)
        return AnyObserver { event in
            guard !runLifetime.isDisposed else { return }
            meter?.record(event)
            do {
                try sink.receive(event)
                if let origins, let origin = Origin.current { origins.hold(origin) }
            } catch {
                // A sink that cannot write (a full disk) is not the message's fault: it
                // goes back on the run's end without counting towards maxDeliver.
                lifetime.dispose()
                run.fail(error)
                return
            }
            switch event {
            case .next: break
            case .completed:
                lifetime.dispose()
                let finished = {
                    for side in compiled.sideStreams { side.onCompleted() }
                    if !isSideStream { run.sinkCompleted() }
                }
                if let asynchronous = compiled.sink as? any AsynchronousSink {
                    asynchronous.whenFinished { if !run.lifetime.isDisposed { finished() } }
                } else {
                    finished()
                }
            case .error(let error):
                // An error delivered with an origin ended the stream at that message's
                // element: the message failed (it counts towards maxDeliver), whichever
                // operator threw and however its onError path was built.
                Origin.current?.fail(error)
                lifetime.dispose()
                run.fail(error)
            }
        }
    }
}
