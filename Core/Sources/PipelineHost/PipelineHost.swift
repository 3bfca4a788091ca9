@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// One way to run a checked pipeline: compiled on a clock with the run's services (checkpoints,
/// meters, a tracer, what components share), started, driven, stopped, and its outcome kept.
/// `rivulet run` (both clocks), `rivulet test` and the component tests' harness all run
/// pipelines through it; what differs between them is only who drives the clock and what they
/// do with the outcome.
@_spi(Host) public final class PipelineHost {
    /// What a run needs besides its pipeline and its clock.
    public struct Setup {
        /// The folder paths in the file are relative to.
        public var baseDirectory = "."
        /// The seed of `random()`.
        public var seed: UInt64 = 1
        /// When the clock reads zero, since the Unix epoch (for `now()`).
        public var epoch: RxTime = .zero
        /// Where components' log lines go.
        public var log: (LogRecord) -> Void = { _ in }
        /// Told every event of every component (`run --trace`).
        public var tracer: ((TraceEvent) -> Void)?
        /// Counts what each component did (`--metrics`, the summary).
        public var meters: RunMeters?
        /// Objects components find by type (an HTTP session, the terminal's tables).
        public var services: [AnyObject] = []
        /// The cores a pipeline without `parallel:` may use.
        public var cores = 1
        /// Makes the run's checkpoints on its clock (`--state`); nil keeps no state.
        public var checkpoints: ((any SchedulerType) -> Checkpoints?)?

        /// The defaults: no state, no meters, nothing logged.
        public init() {}
    }

    /// The clock the pipeline runs on.
    public let scheduler: any SchedulerType
    /// The expressions' clock and random numbers.
    public let environment: ExpressionEnvironment
    /// The pipeline, built.
    public let compiled: CompiledPipeline
    /// The run's checkpoints, when it keeps state.
    public let checkpoints: Checkpoints?
    private let meters: RunMeters?
    /// The running pipeline, once started.
    public private(set) var run: PipelineRun?
    /// How the run ended; nil while it runs (or if it was never started).
    public private(set) var outcome: PipelineRun.Outcome?
    /// How a stop asked for on the real clock ended the run (`requestStop`); nil without one.
    public fileprivate(set) var stopping: Stopping?

    /// Compiles `pipeline` on `scheduler`; throws what a component could not build (a missing
    /// fixture file, say).
    public init(_ pipeline: ValidatedPipeline, on scheduler: any SchedulerType, _ setup: Setup = Setup()) throws {
        self.scheduler = scheduler
        environment = ExpressionEnvironment(seed: setup.seed, epoch: setup.epoch, clock: { scheduler.now })
        checkpoints = setup.checkpoints?(scheduler)
        meters = setup.meters
        compiled = try PipelineCompiler.compile(
            pipeline, scheduler: scheduler, environment: environment, baseDirectory: setup.baseDirectory,
            log: setup.log, tracer: setup.tracer, meters: setup.meters,
            services: setup.services + (checkpoints.map { [$0] } ?? []), cores: setup.cores)
    }

    /// Starts the run, on the pipeline's thread: `ended` is told its outcome once it ends. A
    /// checkpoint that fails stops it; a watched run is ready from now on.
    @discardableResult
    public func start(ended: @escaping (PipelineRun.Outcome) -> Void = { _ in }) -> PipelineRun {
        let run = compiled.start { [weak self] outcome in
            self?.outcome = outcome
            ended(outcome)
        }
        self.run = run
        meters?.readiness.started()
        // Weakly: the checkpoints are among the services the run holds.
        checkpoints?.onFailure = { [weak run] _ in run?.dispose() }
        return run
    }

    /// Stops the run where it is (its sinks are closed); nothing once it has ended.
    public func stop() {
        guard outcome == nil, let run else { return }
        checkpoints?.runStopping()
        run.dispose()
    }

    /// On a virtual clock, after `start`: runs its events until the run ends, nothing is left to
    /// run, `limit` on its clock (the run is then stopped), `maxSteps` events, or `interrupted`
    /// says so; a checkpoint that is due is taken between two events, where every operator's
    /// state is consistent. A run still going at the end is stopped. Returns how many events ran.
    @discardableResult
    public func runToEnd(
        on clock: VirtualTimeScheduler, until limit: RxTimeInterval? = nil, maxSteps: Int = .max,
        interrupted: () -> Bool = { false }
    ) -> Int {
        // Cancelled once the run ends: left on the clock, it would keep the run alive.
        let limitTimer = limit.flatMap { limit in
            run.map { run in
                clock.scheduleAt(clock.ticks(limit)) { [checkpoints] in
                    checkpoints?.runStopping()
                    run.dispose()
                }
            }
        }
        var steps = 0
        while outcome == nil && steps < maxSteps && !interrupted() && clock.runNext() {
            steps += 1
            checkpoints?.checkpointIfDue()
        }
        stop()
        limitTimer?.dispose()
        return steps
    }
}

extension PipelineHost {
    /// How a stop asked for while a real-clock run went on ended it.
    public enum Stopping: Sendable {
        /// With state kept: stopped at once, what operators held is in the last checkpoint.
        case checkpointed
        /// The sources completed as if they had ended, and the run finished.
        case drained
        /// The sources completed, but the run did not finish within the drain timeout.
        case drainTimedOut
        /// Asked for before the run had started (a signal in the process's first milliseconds):
        /// it was never started, nothing was read.
        case beforeStart
    }

    /// On the real clock, from the thread that runs it: starts the run on that thread with its
    /// checkpoint timer and, for a fresh run, a first checkpoint before anything is read (killed
    /// before its first interval, it is resumed from there, not started afresh over what it
    /// wrote); stops it after `limit`; returns once it has ended.
    public func runOnRealClock(_ clock: SerialRunLoopScheduler, until limit: RxTimeInterval? = nil) {
        let host = SchedulerBound(self)
        clock.enqueue {
            let host = host.value
            // A stop asked for before this was queued has run already: nothing to start.
            guard host.stopping != .beforeStart else { return clock.stop() }
            let timer = host.checkpoints?.startTimer()
            let run = host.start { _ in
                timer?.dispose()
                clock.stop()
            }
            if host.outcome == nil, let checkpoints = host.checkpoints, !checkpoints.resumes {
                checkpoints.checkpoint()
            }
            if let limit { clock.schedule(after: limit) { run.dispose() } }
        }
        clock.run()
        // Nothing runs on it any more: what waits, or comes later from another thread, would
        // keep the run's operators alive.
        clock.close()
    }

    /// Asks a real-clock run to stop, from any thread (a signal's). Keeping state and
    /// `keepsOnStop`, it stops at once: its last checkpoint keeps what operators hold, and the
    /// next run goes on from it. Else its sources are drained (their streams complete as if they
    /// had ended; `nats` and `httpServer` stop reading first), so what is in flight and what
    /// operators hold (open windows) is written, and the run is stopped outright after
    /// `drainTimeout`. `stopping` says which it was.
    public func requestStop(on clock: SerialRunLoopScheduler, keepsOnStop: Bool, drainTimeout: RxTimeInterval) {
        let host = SchedulerBound(self)
        clock.interrupt {
            let host = host.value
            if host.run == nil {
                // Not started yet: `runOnRealClock` does not start it.
                host.stopping = .beforeStart
            } else if host.checkpoints != nil && keepsOnStop {
                host.stopping = .checkpointed
                host.run?.dispose()
            } else if host.compiled.drains.drain() {
                host.stopping = .drained
                clock.schedule(after: drainTimeout) {
                    guard host.outcome == nil else { return }
                    host.stopping = .drainTimedOut
                    host.run?.dispose()
                }
            } else {
                host.run?.dispose()
            }
        }
    }
}
