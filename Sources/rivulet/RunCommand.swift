import ArgumentParser
@_spi(Host) import Components
import Foundation
import NIOCore
@_spi(Host) import Pipeline
import Reactive
import StateStore

/// `rivulet run FILE`: runs a pipeline on the real clock (or a virtual one) until it ends.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a pipeline until it ends, fails (exit 1) or is interrupted (exit 130/143).")

    enum ClockKind: String, ExpressibleByArgument, CaseIterable {
        case real, virtual
    }

    @Argument(
        help: "The pipeline file, or - to read it from standard input (paths then resolve from the working directory).")
    var file: String

    @Option(help: "real (the default), or virtual: timers fire in order at once (for pipelines without network I/O).")
    var clock: ClockKind = .real

    @Option(
        name: .customLong("set"), help: "Override a value of the file by its path: ops.1.debounce=300ms.",
        transform: { text in
            guard let override = Override(text) else { throw ValidationError("--set expects key=value, got '\(text)'") }
            return override
        })
    var overrides: [Override] = []

    @Flag(
        help:
            "Print every source's and operator's events, timed, to standard error, and a timeline per operator at the end."
    )
    var trace = false

    @Option(
        help: "Stop the pipeline after this long on its clock (250ms, 10s, 2m).",
        transform: { text in
            guard let duration = DurationSyntax.parse(text) else {
                throw ValidationError("--until expects a duration such as 10s, got '\(text)'")
            }
            return duration
        })
    var until: RxTimeInterval?

    @Option(
        help:
            "After SIGINT/SIGTERM, how long sources that read a stream without end (nats) may take to finish and acknowledge what is in flight (default 30s).",
        transform: { text in
            guard let duration = DurationSyntax.parse(text) else {
                throw ValidationError("--drain-timeout expects a duration such as 10s, got '\(text)'")
            }
            return duration
        })
    var drainTimeout: RxTimeInterval = .seconds(30)

    @Option(help: "The seed of random() (default: the file's 'seed', else from the system).")
    var seed: UInt64?

    @Option(help: "Save every HTTP exchange (keys and tokens removed) to this file, for --replay.")
    var record: String?

    @Option(help: "Answer HTTP requests from a file made by --record; nothing goes to the network.")
    var replay: String?

    @Option(help: "Keep checkpoints in this SQLite file, and resume from it after a crash or a signal.")
    var state: String?

    @Option(
        help: "How often to take a checkpoint with --state (default 1s).",
        transform: { text in
            guard let duration = DurationSyntax.parse(text), duration >= .milliseconds(1) else {
                throw ValidationError("--checkpoint-interval expects a duration of at least 1ms, got '\(text)'")
            }
            return duration
        })
    var checkpointInterval: RxTimeInterval = .seconds(1)

    @Flag(help: "With --state: resume even from a checkpoint of a run that completed (to go on where it ended).")
    var resume = false

    @Option(
        help: ArgumentHelp(
            "Serve /metrics (Prometheus), /health, /ready and /stats (JSON) on this address while the run goes on.",
            valueName: "host:port"))
    var metrics: String?

    @OptionGroup var options: CommonOptions

    /// The name of a pipeline read from standard input, in messages and checkpoints.
    static let standardInputName = "<stdin>"

    /// How the run's HTTP sources reach their servers.
    private var session: HTTPSession {
        if let replay { return HTTPSession(mode: .replay(replay)) }
        if let record { return HTTPSession(mode: .record(record)) }
        return HTTPSession(mode: .live)
    }

    func validate() throws {
        if record != nil && replay != nil { throw ValidationError("--record and --replay cannot be used together") }
        if state == nil && resume { throw ValidationError("--resume needs --state") }
        if let metrics, HTTPServerAddress.parse(metrics) == nil {
            throw ValidationError("--metrics expects HOST:PORT, such as 127.0.0.1:9464; got '\(metrics)'")
        }
        if let replay, !FileManager.default.fileExists(atPath: replay) {
            throw ValidationError("--replay: no such file '\(replay)'")
        }
    }

    func run() throws {
        let limit = until
        let loader = CommandSupport.loader(try CommandSupport.prepare(options))
        let loaded: PipelineLoader.Loaded
        if file == "-" {
            // Named for messages; having no folder, its paths resolve from the working directory.
            let text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            loaded = loader.load(text: text, path: Self.standardInputName, overrides: overrides)
        } else {
            loaded = loader.load(path: file, overrides: overrides)
        }
        let checked = state == nil ? loaded : loaded.checkingCheckpoints()
        guard let pipeline = checked.pipeline else {
            CommandSupport.report(checked)
            throw ExitCode(2)
        }
        var session: CheckpointSession?
        if let state {
            do {
                session = try CheckpointSession(
                    path: state, pipeline: pipeline, file: file == "-" ? Self.standardInputName : file, resume: resume)
            } catch {
                FileHandleOutput.standardError.write("\(error)\n")
                throw ExitCode(2)
            }
        }
        let seed = self.seed ?? pipeline.spec.seed ?? UInt64.random(in: 0...UInt64.max)
        let tracer = trace ? Tracer() : nil
        let meters = try startMetricsEndpoint(pipeline)
        defer { meters?.endpoint.stop() }
        let outcome: PipelineRun.Outcome
        do {
            switch clock {
            case .virtual:
                outcome = try runVirtual(
                    pipeline, baseDirectory: loaded.baseDirectory, seed: seed, limit: limit, tracer: tracer,
                    meters: meters?.meters, session: session)
            case .real:
                outcome = try runReal(
                    pipeline, baseDirectory: loaded.baseDirectory, seed: seed, limit: limit, tracer: tracer,
                    meters: meters?.meters, session: session)
            }
        } catch let error as StateStoreError {
            // A checkpoint that could not be saved: the run stopped, the last good checkpoint is kept.
            FileHandleOutput.standardError.write("\(error)\n")
            throw ExitCode(1)
        } catch {
            // A component that cannot be built (a fixture file that is missing, say): the file is invalid.
            FileHandleOutput.standardError.write("\(error)\n")
            throw ExitCode(2)
        }
        tracer?.printTimelines()
        switch outcome {
        case .completed:
            return
        case .failed(let error as StandardOutputClosed):
            // `rivulet run … | head -1`: the reader has what it wanted; end as SIGPIPE would.
            _ = error
            throw ExitCode(128 + SIGPIPE)
        case .failed(let error):
            FileHandleOutput.standardError.write("\(error)\n")
            throw ExitCode(1)
        case .cancelled:
            if let signal = SignalWatcher.received { throw ExitCode(128 + signal) }
        }
    }

    /// With --metrics: the run's meters and the endpoint serving them, listening before the run
    /// starts; an address that cannot be listened on is an error of the command line (exit 2).
    private func startMetricsEndpoint(_ pipeline: ValidatedPipeline) throws -> (
        meters: RunMeters, endpoint: MetricsEndpoint
    )? {
        guard let metrics, let (host, port) = HTTPServerAddress.parse(metrics) else { return nil }
        let meters = RunMeters()
        let name =
            pipeline.spec.name
            ?? URL(fileURLWithPath: pipeline.spec.file).deletingPathExtension().lastPathComponent
        do {
            let endpoint = try MetricsEndpoint(
                host: host, port: port, exporter: RunMetricsExporter(meters: meters, pipeline: name))
            log("metrics: serving /metrics, /health, /ready and /stats on http://\(host):\(endpoint.port)")
            return (meters, endpoint)
        } catch {
            log("error: --metrics: cannot listen on \(metrics): \(Self.describe(error))")
            throw ExitCode(2)
        }
    }

    /// A listening error as a person reads it (NIO's text names the call and the errno).
    private static func describe(_ error: any Error) -> String {
        if let error = error as? IOError {
            return error.errnoCode == EADDRINUSE
                ? "the address is already in use" : String(cString: strerror(error.errnoCode))
        }
        return "\(error)"
    }

    /// What `onError: skip` dropped, one warning per component.
    private func reportSkipped(_ compiled: CompiledPipeline) {
        for line in compiled.skipped.summary { log(line) }
    }

    private func log(_ line: String) { FileHandleOutput.standardError.write(line + "\n") }

    /// After a signal stopped the run (its sinks are flushed and closed): exits at once with
    /// 128 + the signal, without waiting to free what the pipeline holds (a million-element
    /// document takes longer to free than a signal may wait).
    private static func exitIfSignalled(_ tracer: Tracer?) {
        guard let signal = SignalWatcher.received else { return }
        tracer?.printTimelines()
        Glibc.exit(128 + signal)
    }

    /// After the run, with --state: the final checkpoint; a checkpoint that failed is thrown.
    private static func finish(
        _ session: CheckpointSession?, _ checkpoints: Checkpoints?, _ outcome: PipelineRun.Outcome?
    ) throws {
        guard let session, let checkpoints, let failure = session.finish(outcome, checkpoints: checkpoints) else {
            return
        }
        throw failure as? StateStoreError ?? StateStoreError("cannot take a checkpoint: \(failure)", isRunTime: true)
    }

    private func runVirtual(
        _ pipeline: ValidatedPipeline, baseDirectory: String, seed: UInt64, limit: RxTimeInterval?, tracer: Tracer?,
        meters: RunMeters?, session checkpointSession: CheckpointSession?
    ) throws -> PipelineRun.Outcome {
        let scheduler = VirtualTimeScheduler(resolution: .microseconds(1))
        let environment = ExpressionEnvironment(seed: seed, clock: { scheduler.now })
        // On the virtual clock no timer checks for due checkpoints (it would keep an idle run
        // going for ever): sources take them between elements, and one is taken at the end.
        let checkpoints = checkpointSession?.makeCheckpoints(scheduler: scheduler, interval: checkpointInterval)
        let compiled = try PipelineCompiler.compile(
            pipeline, scheduler: scheduler, environment: environment, baseDirectory: baseDirectory, log: log,
            tracer: tracer.map { tracer in { tracer.record($0) } }, meters: meters,
            services: [session] + (checkpoints.map { [$0] } ?? []))
        // The signal thread only raises the flag (a source emitting synchronously inside start()
        // checks it); the loop below, on this thread, stops the run.
        let interruption = scheduler.interruption
        SignalWatcher.start { interruption.raise() }
        var outcome: PipelineRun.Outcome?
        let run = compiled.start { outcome = $0 }
        checkpoints?.onFailure = { _ in run.dispose() }
        if let limit {
            scheduler.scheduleAt(scheduler.ticks(limit)) { run.dispose() }
        }
        while !scheduler.isInterrupted && outcome == nil && scheduler.runNext() {}
        if outcome == nil { run.dispose() }
        reportSkipped(compiled)
        try Self.finish(checkpointSession, checkpoints, outcome)
        Self.exitIfSignalled(tracer)
        if case .cancelled? = outcome { return .completed }
        return outcome ?? .completed
    }

    private func runReal(
        _ pipeline: ValidatedPipeline, baseDirectory: String, seed: UInt64, limit: RxTimeInterval?, tracer: Tracer?,
        meters: RunMeters?, session checkpointSession: CheckpointSession?
    ) throws -> PipelineRun.Outcome {
        let scheduler = SerialRunLoopScheduler()
        let environment = ExpressionEnvironment(seed: seed, clock: { scheduler.now })
        let checkpoints = checkpointSession?.makeCheckpoints(scheduler: scheduler, interval: checkpointInterval)
        let compiled = try PipelineCompiler.compile(
            pipeline, scheduler: scheduler, environment: environment, baseDirectory: baseDirectory, log: log,
            tracer: tracer.map { tracer in { tracer.record($0) } }, meters: meters,
            services: [session] + (checkpoints.map { [$0] } ?? []))
        // Everything below runs on this thread, inside scheduler.run(); the holder only carries it there.
        let holder = SchedulerBound(RunHolder(compiled: compiled, checkpoints: checkpoints))
        scheduler.enqueue {
            let state = holder.value
            let timer = state.checkpoints?.startTimer()
            let run = state.compiled.start { result in
                timer?.dispose()
                state.outcome = result
                scheduler.stop()
            }
            state.run = run
            state.checkpoints?.onFailure = { _ in run.dispose() }
            if let limit {
                scheduler.schedule(after: limit) { run.dispose() }
            }
        }
        // A signal drains the sources that can stop reading (NATS): their streams complete, what is
        // in flight is written and acknowledged; the run is stopped outright after the timeout or
        // at once when no source can drain.
        let drainTimeout = self.drainTimeout
        SignalWatcher.start {
            scheduler.interrupt {
                let state = holder.value
                if state.compiled.drains.drain() {
                    scheduler.schedule(after: drainTimeout) { state.run?.dispose() }
                } else {
                    state.run?.dispose()
                }
            }
        }
        scheduler.run()
        // Sources that owe the server acknowledgements send them before the process ends.
        compiled.drains.finish()
        let outcome = holder.value.outcome
        reportSkipped(compiled)
        try Self.finish(checkpointSession, checkpoints, outcome)
        Self.exitIfSignalled(tracer)
        if case .cancelled? = outcome { return .completed }
        return outcome ?? .cancelled
    }
}

/// The state of a real-clock run, used on the pipeline's thread only.
final class RunHolder {
    let compiled: CompiledPipeline
    let checkpoints: Checkpoints?
    var run: PipelineRun?
    var outcome: PipelineRun.Outcome?

    init(compiled: CompiledPipeline, checkpoints: Checkpoints?) {
        self.compiled = compiled
        self.checkpoints = checkpoints
    }
}
