@_spi(Host) import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import PipelineHost
@_spi(Components) import Reactive
import StateStore

/// A run on either clock, driven by `PipelineHost`, with what the command adds: signals, the last
/// checkpoint, the report and the exit code.
extension RunCommand {
    /// Runs `pipeline` on the virtual clock (`virtual`) or the real one, to its end, `limit`, or
    /// a signal: on the virtual clock due checkpoints are taken between events and a signal
    /// interrupts it; on the real one a signal drains it or, keeping state, stops it at once.
    func run(
        _ pipeline: ValidatedPipeline, virtual: Bool, baseDirectory: String, seed: UInt64, limit: RxTimeInterval?,
        tracer: Tracer?, meters: RunMeters, session checkpointSession: CheckpointSession?,
        control: RunControl<Version>
    ) throws -> PipelineRun.Outcome {
        let started = ProcessInfo.processInfo.systemUptime
        var setup = PipelineHost.Setup()
        (setup.baseDirectory, setup.seed, setup.log, setup.meters) = (baseDirectory, seed, RunLog.write, meters)
        setup.tracer = tracer.map { tracer in { tracer.record($0) } }
        // Under --watch a changed `wasm` module is swapped in between two elements; a keyed
        // aggregate is split over the cores where the plan says (docs/pipelines.md).
        setup.services = [session, liveTables, BuiltinComponents.keyedSplitter] + (watch ? [WasmHotSwap()] : [])
        setup.checkpoints = { [checkpointInterval] in
            checkpointSession?.makeCheckpoints(scheduler: $0, interval: checkpointInterval)
        }
        let host: PipelineHost
        defer { control.uninstall() }
        if virtual {
            let clock = VirtualTimeScheduler(resolution: .microseconds(1))
            host = try PipelineHost(pipeline, on: clock, setup)
            // The signal thread only raises the flag; the host's loop, on this thread, stops the run.
            let interruption = clock.interruption
            control.install { interruption.raise() }
            let progress = startProgress(meters)
            host.start()
            host.runToEnd(on: clock, until: limit, interrupted: { clock.isInterrupted })
            try finish(host, checkpointSession, tracer, meters, progress: progress, started: started)
        } else {
            let clock = SerialRunLoopScheduler()
            // The one reading of the wall clock: when the run's clock reads zero, for `now()`.
            setup.epoch = RxTime.nanoseconds(Int64(Date().timeIntervalSince1970 * 1e9)) - clock.now
            setup.cores = ProcessInfo.processInfo.activeProcessorCount
            host = try PipelineHost(pipeline, on: clock, setup)
            let (bound, keepsOnStop, drainTimeout) = (SchedulerBound(host), !drain, drainTimeout)
            control.install { bound.value.requestStop(on: clock, keepsOnStop: keepsOnStop, drainTimeout: drainTimeout) }
            let progress = startProgress(meters)
            host.runOnRealClock(clock, until: limit)
            try finish(
                host, checkpointSession, tracer, meters, progress: progress, started: started, settlesSources: true)
        }
        if case .cancelled? = host.outcome { return .completed }
        return host.outcome ?? (virtual ? .completed : .cancelled)
    }

    /// After the run: with --state the last checkpoint, then the operators' state is let go of
    /// (and with it the messages it held), before sources settle what they owe the server (on the
    /// real clock); the report; then a checkpoint that failed is thrown, or after a signal the
    /// process exits at once with 128 + the signal, without waiting to free what the pipeline
    /// holds (a million-element document takes longer to free than a signal may wait).
    private func finish(
        _ host: PipelineHost, _ session: CheckpointSession?, _ tracer: Tracer?, _ meters: RunMeters,
        progress: ProgressLine?, started: Double, settlesSources: Bool = false
    ) throws {
        let failure = host.checkpoints.flatMap { session?.finish(host.outcome, checkpoints: $0) }
        host.checkpoints?.end()
        if settlesSources { host.compiled.drains.finish() }
        report(
            host.compiled, host.outcome, meters: meters, progress: progress, started: started, stopping: host.stopping)
        if let failure {
            throw failure as? StateStoreError
                ?? StateStoreError("cannot take a checkpoint: \(failure)", isRunTime: true)
        }
        guard let signal = SignalWatcher.received else { return }
        tracer?.printTimelines()
        Glibc.exit(128 + signal)
    }
}
