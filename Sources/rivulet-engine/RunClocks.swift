import ArgumentParser
@_spi(Host) import Components
import Foundation
import Logging
import NIOCore
@_spi(Host) import Pipeline
@_spi(Host) import PipelineHost
import Reactive
import StateStore
@_spi(Host) import Tooling

/// A run on the virtual clock and on the real one: start, signals, checkpoints, end.
extension RunCommand {
    /// After a signal stopped the run (its sinks are flushed and closed): exits at once with
    /// 128 + the signal, without waiting to free what the pipeline holds (a million-element
    /// document takes longer to free than a signal may wait).
    static func exitIfSignalled(_ tracer: Tracer?) {
        guard let signal = SignalWatcher.received else { return }
        tracer?.printTimelines()
        Glibc.exit(128 + signal)
    }

    /// After the run, with --state: the final checkpoint, then the operators' state is let go of
    /// (and with it the messages it held); a checkpoint that failed is thrown.
    static func finish(
        _ session: CheckpointSession?, _ checkpoints: Checkpoints?, _ outcome: PipelineRun.Outcome?
    ) throws {
        guard let session, let checkpoints else { return }
        let failure = session.finish(outcome, checkpoints: checkpoints)
        checkpoints.end()
        guard let failure else { return }
        throw failure as? StateStoreError ?? StateStoreError("cannot take a checkpoint: \(failure)", isRunTime: true)
    }

    /// What both clocks' runs compile with.
    private func setup(
        _ baseDirectory: String, _ seed: UInt64, _ tracer: Tracer?, _ meters: RunMeters,
        _ checkpointSession: CheckpointSession?
    ) -> PipelineHost.Setup {
        var setup = PipelineHost.Setup()
        setup.baseDirectory = baseDirectory
        setup.seed = seed
        setup.log = RunLog.write
        setup.tracer = tracer.map { tracer in { tracer.record($0) } }
        setup.meters = meters
        // Under --watch a changed `wasm` module is swapped in between two elements.
        // A keyed aggregate is split over the cores by default where the plan says (docs/pipelines.md).
        setup.services = [session, liveTables, BuiltinComponents.keyedSplitter] + (watch ? [WasmHotSwap()] : [])
        setup.checkpoints = { [checkpointInterval] scheduler in
            checkpointSession?.makeCheckpoints(scheduler: scheduler, interval: checkpointInterval)
        }
        return setup
    }

    func runVirtual(
        _ pipeline: ValidatedPipeline, baseDirectory: String, seed: UInt64, limit: RxTimeInterval?, tracer: Tracer?,
        meters: RunMeters, session checkpointSession: CheckpointSession?, control: RunControl<Version>
    ) throws -> PipelineRun.Outcome {
        let started = ProcessInfo.processInfo.systemUptime
        let scheduler = VirtualTimeScheduler(resolution: .microseconds(1))
        // On the virtual clock no timer checks for due checkpoints (it would keep an idle run
        // going for ever): they are taken between events, and one at the end.
        let host = try PipelineHost(
            pipeline, on: scheduler, setup(baseDirectory, seed, tracer, meters, checkpointSession))
        let compiled = host.compiled
        let checkpoints = host.checkpoints
        // The signal thread only raises the flag (a source emitting synchronously inside start()
        // checks it); the loop below, on this thread, stops the run.
        let interruption = scheduler.interruption
        control.install { interruption.raise() }
        defer { control.uninstall() }
        let progress = startProgress(meters)
        host.start()
        host.runToEnd(on: scheduler, until: limit, interrupted: { scheduler.isInterrupted })
        let outcome = host.outcome
        let finished = Result { try Self.finish(checkpointSession, checkpoints, outcome) }
        report(compiled, outcome, meters: meters, progress: progress, started: started)
        try finished.get()
        Self.exitIfSignalled(tracer)
        if case .cancelled? = outcome { return .completed }
        return outcome ?? .completed
    }

    func runReal(
        _ pipeline: ValidatedPipeline, baseDirectory: String, seed: UInt64, limit: RxTimeInterval?, tracer: Tracer?,
        meters: RunMeters, session checkpointSession: CheckpointSession?, control: RunControl<Version>
    ) throws -> PipelineRun.Outcome {
        let started = ProcessInfo.processInfo.systemUptime
        let scheduler = SerialRunLoopScheduler()
        var setup = setup(baseDirectory, seed, tracer, meters, checkpointSession)
        // The one reading of the wall clock: when the run's clock reads zero, for `now()`.
        setup.epoch = RxTime.nanoseconds(Int64(Date().timeIntervalSince1970 * 1e9)) - scheduler.now
        setup.cores = ProcessInfo.processInfo.activeProcessorCount
        let host = try PipelineHost(pipeline, on: scheduler, setup)
        let compiled = host.compiled
        let checkpoints = host.checkpoints
        // Everything below runs on this thread, inside scheduler.run(); the holder only carries it there.
        let holder = SchedulerBound(RunHolder(host: host))
        scheduler.enqueue {
            let state = holder.value
            let timer = state.checkpoints?.startTimer()
            let run = state.host.start { _ in
                timer?.dispose()
                scheduler.stop()
            }
            // A fresh run's first checkpoint, before anything is read: killed before its first
            // interval, it is resumed from here (an appending `file` sink cut back to its length
            // now), not started afresh over what it wrote. A resumed run has its checkpoint.
            if state.host.outcome == nil, let checkpoints = state.checkpoints, !checkpoints.resumes {
                checkpoints.checkpoint()
            }
            if let limit {
                scheduler.schedule(after: limit) { run.dispose() }
            }
        }
        defer { control.uninstall() }
        installStop(control, holder, on: scheduler)
        let progress = startProgress(meters)
        scheduler.run()
        let outcome = holder.value.outcome
        // The last checkpoint comes before sources settle what they owe the server: the messages
        // whose elements operators hold in it are acknowledged with the rest.
        let finished = Result { try Self.finish(checkpointSession, checkpoints, outcome) }
        compiled.drains.finish()
        report(
            compiled, outcome, meters: meters, progress: progress, started: started,
            stopping: holder.value.stopping)
        try finished.get()
        Self.exitIfSignalled(tracer)
        if case .cancelled? = outcome { return .completed }
        return outcome ?? .cancelled
    }
}

extension RunCommand {
    /// A signal drains the sources: their streams complete as if they had ended (nats and
    /// httpServer stop reading first), what is in flight and what operators hold (open windows)
    /// is written; the run is stopped outright after the timeout. With --state the run stops at
    /// once instead: its last checkpoint keeps what operators hold, and the next run goes on from it.
    func installStop(
        _ control: RunControl<Version>, _ holder: SchedulerBound<RunHolder>, on scheduler: SerialRunLoopScheduler
    ) {
        let drainTimeout = self.drainTimeout
        let keepsOnStop = !drain
        control.install {
            scheduler.interrupt {
                let state = holder.value
                if state.checkpoints != nil && keepsOnStop {
                    state.stopping = .checkpointed
                    state.run?.dispose()
                } else if state.compiled.drains.drain() {
                    state.stopping = .drained
                    scheduler.schedule(after: drainTimeout) {
                        guard state.outcome == nil else { return }
                        state.stopping = .drainTimedOut
                        state.run?.dispose()
                    }
                } else {
                    state.run?.dispose()
                }
            }
        }
    }
}

/// How a signal stopped a real-clock run: what became of what operators held (open windows,
/// pending timers), said after the run's summary.
enum Stopping {
    /// With --state: stopped at once, kept in the last checkpoint.
    case checkpointed
    /// The sources completed as if they had ended, and the run finished.
    case drained
    /// The sources completed, but the run did not finish within --drain-timeout.
    case drainTimedOut

    var line: String {
        switch self {
        case .checkpointed:
            return "stopped: what operators held (open windows, pending timers, unanswered requests) is in the "
                + "last checkpoint; the next run with --state goes on from it"
        case .drained:
            return "stopped: the sources ended as if their input had: open windows were emitted and written"
        case .drainTimedOut:
            return "stopped: the run did not finish within --drain-timeout after the signal: what operators "
                + "still held was dropped"
        }
    }
}

/// The state of a real-clock run, used on the pipeline's thread only.
final class RunHolder {
    let host: PipelineHost
    var compiled: CompiledPipeline { host.compiled }
    var checkpoints: Checkpoints? { host.checkpoints }
    var run: PipelineRun? { host.run }
    var outcome: PipelineRun.Outcome? { host.outcome }
    var stopping: Stopping?

    init(host: PipelineHost) {
        self.host = host
    }
}
