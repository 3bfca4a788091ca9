import ArgumentParser
@_spi(Host) import Components
import Foundation
import Logging
import NIOCore
@_spi(Host) import Pipeline
import Reactive
import StateStore

/// `rivulet run FILE`: runs a pipeline on the real clock (or a virtual one) until it ends.
struct RunCommand: ParsableCommand, HandlesStopSignals {
    var handlesStopSignals: Bool { true }

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

    @Flag(
        help:
            "With --state: on SIGINT/SIGTERM, end the sources as if their input had (open windows are emitted and written, and the run completes) instead of keeping what operators hold in the last checkpoint (Flink's stop --drain)."
    )
    var drain = false

    @Option(
        help:
            "After SIGINT/SIGTERM, how long the sources may take to end and what is in flight to be written and acknowledged (default 30s).",
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

    @Option(
        help: ArgumentHelp(
            "Serve a live view of the run on this address: its graph with the rate on every edge, each node's elements, the table sinks.",
            valueName: "host:port"))
    var ui: String?

    @Flag(name: .shortAndLong, help: "No progress line and no summary at the end (errors and warnings still show).")
    var quiet = false

    @Flag(help: "At the end, a table of every component: elements in and out, errors.")
    var summary = false

    @Flag(
        help:
            "Read the file again when it changes (or on SIGHUP): a valid new version replaces the running one (resuming from --state); one with errors leaves it running."
    )
    var watch = false

    @OptionGroup var options: CommonOptions

    /// The `table` sinks' rows, for the live view (one object for the whole process).
    private var liveTables: LiveTables { Self.tables }
    private static let tables = LiveTables()

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
        if state == nil && drain {
            throw ValidationError(
                "--drain needs --state (without it, a signal always ends the sources and writes what they hold)")
        }
        if watch && file == "-" { throw ValidationError("--watch needs a pipeline file, not standard input") }
        if let metrics, HTTPServerAddress.parse(metrics) == nil {
            throw ValidationError(
                "--metrics expects HOST:PORT, such as 127.0.0.1:9464 (0.0.0.0:9464 for every address); got '\(metrics)'"
            )
        }
        if let ui, HTTPServerAddress.parse(ui) == nil {
            throw ValidationError(
                "--ui expects HOST:PORT, such as 127.0.0.1:8080 (0.0.0.0:8080 for every address); got '\(ui)'")
        }
        if let replay, !FileManager.default.fileExists(atPath: replay) {
            throw ValidationError("--replay: no such file '\(replay)'")
        }
    }

    func run() throws {
        // Before any thread starts, so that none of them gets SIGHUP's default action (exit).
        if watch { SignalWatcher.blockHangUp() }
        let control = RunControl<Version>()
        let reloadAction = LateAction()
        SignalWatcher.start(hangUp: watch ? reloadAction.call : nil, giveUpAfter: drainTimeout + .seconds(5)) {
            control.stop()
        }
        // Nothing is read or written yet while the pipeline loads (from standard input, perhaps,
        // which a signal does not interrupt): a signal then ends the process at once.
        control.install { _exit(128 + (SignalWatcher.received ?? SIGTERM)) }
        let loader = CommandSupport.loader(try CommandSupport.prepare(options))
        let loaded = load(loader)
        control.uninstall()
        guard let pipeline = loaded.pipeline else {
            CommandSupport.report(loaded)
            throw ExitCode(2)
        }
        // Under --watch, a change of the file (or SIGHUP) reads it again; only a valid version
        // replaces the running one.
        let reloader = Serialized(loader)
        let reload: @Sendable () -> Void = { [self] in
            reloader.with { loader in self.reload(loader, control) }
        }
        reloadAction.set(reload)
        let watcher = watch ? FileWatcher(paths: { [file] }, changed: reload) : nil
        let tracer = trace ? Tracer() : nil
        RunLog.pipeline = Self.name(of: pipeline)
        // Sources and sinks are always metered (for the summary and the progress line); operators
        // only when something shows them.
        var meters = RunMeters(metersOperators: metrics != nil || summary || ui != nil)
        let exporter = RunMetricsExporter(meters: meters, pipeline: Self.name(of: pipeline))
        let live = liveView(pipeline)
        let endpoint = try startMetricsEndpoint(exporter, live: ui == metrics ? live : nil)
        defer { endpoint?.stop() }
        let viewEndpoint = ui != metrics ? try startLiveView(exporter, live) : nil
        defer { viewEndpoint?.stop() }
        var version = Version(loaded: loaded, pipeline: pipeline)
        var resuming = resume
        while true {
            let outcome: PipelineRun.Outcome
            do {
                outcome = try runOnce(
                    version, resume: resuming, meters: meters, tracer: tracer, control: control,
                    exporter: endpoint == nil ? nil : exporter)
            } catch let code as ExitCode where watch {
                // Under --watch a version that cannot start (said already) waits for the next edit.
                _ = code
                outcome = .completed
            }
            guard watch else { return try end(outcome, tracer: tracer) }
            _ = watcher
            if let signal = SignalWatcher.received { throw ExitCode(128 + signal) }
            if !control.hasReplacement { RunLog.info("watch: the run ended; waiting for \(file) to change") }
            guard let next = control.next(wait: true) else {
                throw ExitCode(128 + (SignalWatcher.received ?? SIGTERM))
            }
            version = next
            // A new version goes on from where the last one was (with --state).
            resuming = true
            meters = RunMeters(metersOperators: metrics != nil || summary || ui != nil)
            exporter.replace(meters)
            live?.replace(next.pipeline, title: Self.name(of: next.pipeline))
            RunLog.pipeline = Self.name(of: next.pipeline)
        }
    }

    /// Under --watch: the file read again, and the running version replaced if the new one is valid.
    private func reload(_ loader: PipelineLoader, _ control: RunControl<Version>) {
        let next = load(loader)
        if let pipeline = next.pipeline {
            RunLog.info("watch: \(file) changed; stopping the running version and starting the new one")
            control.replace(with: Version(loaded: next, pipeline: pipeline))
        } else {
            let errors = next.diagnostics.filter { $0.severity == .error }.count
            RunLog.error(
                "error: watch: \(file) changed but has \(errors) error\(errors == 1 ? "" : "s"); "
                    + "the running version goes on")
            CommandSupport.report(next)
        }
    }

    /// One version of the pipeline file, checked. Read on the watching thread and handed to the
    /// run's thread once, through `RunControl`'s lock.
    struct Version: @unchecked Sendable {
        let loaded: PipelineLoader.Loaded
        let pipeline: ValidatedPipeline
    }

    /// The pipeline file read and checked (with --state, for checkpoints too).
    private func load(_ loader: PipelineLoader) -> PipelineLoader.Loaded {
        let loaded: PipelineLoader.Loaded
        if file == "-" {
            // Named for messages; having no folder, its paths resolve from the working directory.
            let text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            loaded = loader.load(text: text, path: Self.standardInputName, overrides: overrides)
        } else {
            loaded = loader.load(path: file, overrides: overrides)
        }
        return state == nil ? loaded.checkingAcknowledgements() : loaded.checkingCheckpoints()
    }

    /// Runs one version until it ends or is stopped; what could not start is an exit code.
    private func runOnce(
        _ version: Version, resume: Bool, meters: RunMeters, tracer: Tracer?, control: RunControl<Version>,
        exporter: RunMetricsExporter?
    ) throws -> PipelineRun.Outcome {
        let pipeline = version.pipeline
        var session: CheckpointSession?
        if let state {
            do {
                session = try CheckpointSession(
                    path: state, pipeline: pipeline, file: file == "-" ? Self.standardInputName : file, resume: resume)
            } catch {
                RunLog.error("\(error)")
                throw ExitCode(2)
            }
        }
        let seed = self.seed ?? pipeline.spec.seed ?? UInt64.random(in: 0...UInt64.max)
        defer { session?.close() }
        if let exporter { session?.onCommit = { exporter.observeCheckpoint(seconds: $0) } }
        do {
            switch clock {
            case .virtual:
                return try runVirtual(
                    pipeline, baseDirectory: version.loaded.baseDirectory, seed: seed, limit: until, tracer: tracer,
                    meters: meters, session: session, control: control)
            case .real:
                return try runReal(
                    pipeline, baseDirectory: version.loaded.baseDirectory, seed: seed, limit: until, tracer: tracer,
                    meters: meters, session: session, control: control)
            }
        } catch let error as StateStoreError {
            // A checkpoint that could not be saved: the run stopped, the last good checkpoint is kept.
            RunLog.error("\(error)")
            throw ExitCode(1)
        } catch {
            // A component that cannot be built (a fixture file that is missing, say): the file is invalid.
            RunLog.error("\(error)")
            throw ExitCode(2)
        }
    }

    /// The exit of a run that ended as `outcome`.
    private func end(_ outcome: PipelineRun.Outcome, tracer: Tracer?) throws {
        tracer?.printTimelines()
        switch outcome {
        case .completed:
            return
        case .failed(let error as StandardOutputClosed):
            // `rivulet run … | head -1`: the reader has what it wanted; end as SIGPIPE would.
            _ = error
            throw ExitCode(128 + SIGPIPE)
        case .failed:
            // Its error was written before the summary (see `report`).
            throw ExitCode(1)
        case .cancelled:
            if let signal = SignalWatcher.received { throw ExitCode(128 + signal) }
        }
    }

    /// With --metrics: the run's meters and the endpoint serving them, listening before the run
    /// starts; an address that cannot be listened on is an error of the command line (exit 2).
    private func startMetricsEndpoint(_ exporter: RunMetricsExporter, live: LiveView?) throws -> MetricsEndpoint? {
        guard let metrics, let (host, port) = HTTPServerAddress.parse(metrics) else { return nil }
        do {
            let endpoint = try MetricsEndpoint(host: host, port: port, exporter: exporter, live: live)
            log("metrics: serving /metrics, /health, /ready and /stats on http://\(host):\(endpoint.port)")
            if live != nil { log("ui: the live view is at http://\(host):\(endpoint.port)/") }
            return endpoint
        } catch {
            RunLog.error("error: --metrics: cannot listen on \(metrics): \(Self.describe(error))")
            throw ExitCode(2)
        }
    }

    /// The pipeline's name: its `name`, else its file's name without the extension.
    private static func name(of pipeline: ValidatedPipeline) -> String {
        pipeline.spec.name ?? URL(fileURLWithPath: pipeline.spec.file).deletingPathExtension().lastPathComponent
    }

    /// At the end of a run: the progress line cleared, the warnings of `onError: skip`, the
    /// error a failed run ended with, then the summary line (and with --summary, the table).
    private func report(
        _ compiled: CompiledPipeline, _ outcome: PipelineRun.Outcome?, meters: RunMeters, progress: ProgressLine?,
        started: Double, stopping: Stopping? = nil
    ) {
        progress?.stop()
        reportSkipped(compiled)
        let ending: RunSummary.Ending
        switch outcome {
        case .completed?: ending = SignalWatcher.received != nil ? .interrupted : .completed
        case .failed(let error as StandardOutputClosed)?:
            _ = error
            ending = .stopped
        case .failed(let error)?:
            RunLog.error("\(error)")
            ending = .failed
        case .cancelled?, nil: ending = SignalWatcher.received != nil ? .interrupted : .stopped
        }
        guard !quiet else { return }
        let skipped = compiled.skipped.entries.reduce(0) { $0 + $1.count }
        let summary = RunSummary(
            meters: meters, skipped: skipped, failed: ending == .failed,
            seconds: ProcessInfo.processInfo.systemUptime - started)
        if self.summary {
            if RunLog.format == .json {
                for meter in meters.components {
                    var fields: Logger.Metadata = [
                        "place": .string(meter.place), "component": .string(meter.component),
                        "errors": .stringConvertible(meter.errors),
                    ]
                    if meter.kind != .sink { fields["out"] = .stringConvertible(meter.elements) }
                    if let incoming = meter.elementsIn { fields["in"] = .stringConvertible(incoming) }
                    RunLog.info("component summary", fields: fields)
                }
            } else {
                log(RunSummary.table(meters))
            }
        }
        RunLog.info(
            summary.line(ending),
            fields: [
                "ending": .string(ending.rawValue), "read": .stringConvertible(summary.read),
                "written": .stringConvertible(summary.written), "errors": .stringConvertible(summary.errors),
                "seconds": .stringConvertible(summary.seconds),
            ])
        if ending == .interrupted, let stopping {
            RunLog.info(stopping.line)
        }
    }

    /// The progress line, when this run shows one.
    private func startProgress(_ meters: RunMeters) -> ProgressLine? {
        ProgressLine.isWanted(quiet: quiet, meters: meters) ? ProgressLine(meters: meters) : nil
    }

    /// With --ui at an address of its own: the live view's server (its page, `/stats`, `/tap`).
    private func startLiveView(_ exporter: RunMetricsExporter, _ live: LiveView?) throws -> MetricsEndpoint? {
        guard let ui, let live, let (host, port) = HTTPServerAddress.parse(ui) else { return nil }
        do {
            let endpoint = try MetricsEndpoint(host: host, port: port, exporter: exporter, metrics: false, live: live)
            log("ui: the live view is at http://\(host):\(endpoint.port)/")
            return endpoint
        } catch {
            RunLog.error("error: --ui: cannot listen on \(ui): \(Self.describe(error))")
            throw ExitCode(2)
        }
    }

    /// The live view of `pipeline`, when --ui asks for one.
    private func liveView(_ pipeline: ValidatedPipeline) -> LiveView? {
        guard ui != nil else { return nil }
        return LiveView(pipeline, title: Self.name(of: pipeline), tables: liveTables)
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
        for line in compiled.skipped.summary { RunLog.warning(line) }
    }

    private func log(_ line: String) { RunLog.info(line) }

    /// After a signal stopped the run (its sinks are flushed and closed): exits at once with
    /// 128 + the signal, without waiting to free what the pipeline holds (a million-element
    /// document takes longer to free than a signal may wait).
    private static func exitIfSignalled(_ tracer: Tracer?) {
        guard let signal = SignalWatcher.received else { return }
        tracer?.printTimelines()
        Glibc.exit(128 + signal)
    }

    /// After the run, with --state: the final checkpoint, then the operators' state is let go of
    /// (and with it the messages it held); a checkpoint that failed is thrown.
    private static func finish(
        _ session: CheckpointSession?, _ checkpoints: Checkpoints?, _ outcome: PipelineRun.Outcome?
    ) throws {
        guard let session, let checkpoints else { return }
        let failure = session.finish(outcome, checkpoints: checkpoints)
        checkpoints.end()
        guard let failure else { return }
        throw failure as? StateStoreError ?? StateStoreError("cannot take a checkpoint: \(failure)", isRunTime: true)
    }

    private func runVirtual(
        _ pipeline: ValidatedPipeline, baseDirectory: String, seed: UInt64, limit: RxTimeInterval?, tracer: Tracer?,
        meters: RunMeters, session checkpointSession: CheckpointSession?, control: RunControl<Version>
    ) throws -> PipelineRun.Outcome {
        let started = ProcessInfo.processInfo.systemUptime
        let scheduler = VirtualTimeScheduler(resolution: .microseconds(1))
        let environment = ExpressionEnvironment(seed: seed, clock: { scheduler.now })
        // On the virtual clock no timer checks for due checkpoints (it would keep an idle run
        // going for ever): they are taken between events, and one at the end.
        let checkpoints = checkpointSession?.makeCheckpoints(scheduler: scheduler, interval: checkpointInterval)
        let compiled = try PipelineCompiler.compile(
            pipeline, scheduler: scheduler, environment: environment, baseDirectory: baseDirectory, log: RunLog.write,
            tracer: tracer.map { tracer in { tracer.record($0) } }, meters: meters,
            services: [session, liveTables] + (checkpoints.map { [$0] } ?? []))
        // The signal thread only raises the flag (a source emitting synchronously inside start()
        // checks it); the loop below, on this thread, stops the run.
        let interruption = scheduler.interruption
        control.install { interruption.raise() }
        defer { control.uninstall() }
        var outcome: PipelineRun.Outcome?
        let progress = startProgress(meters)
        let run = compiled.start { outcome = $0 }
        checkpoints?.onFailure = { _ in run.dispose() }
        if let limit {
            scheduler.scheduleAt(scheduler.ticks(limit)) { run.dispose() }
        }
        // Between two events every operator's state is consistent: a checkpoint due on the
        // virtual clock is taken there (sources that emit on timers, as `events` does, take none).
        while !scheduler.isInterrupted && outcome == nil && scheduler.runNext() { checkpoints?.checkpointIfDue() }
        if outcome == nil { run.dispose() }
        let finished = Result { try Self.finish(checkpointSession, checkpoints, outcome) }
        report(compiled, outcome, meters: meters, progress: progress, started: started)
        try finished.get()
        Self.exitIfSignalled(tracer)
        if case .cancelled? = outcome { return .completed }
        return outcome ?? .completed
    }

    private func runReal(
        _ pipeline: ValidatedPipeline, baseDirectory: String, seed: UInt64, limit: RxTimeInterval?, tracer: Tracer?,
        meters: RunMeters, session checkpointSession: CheckpointSession?, control: RunControl<Version>
    ) throws -> PipelineRun.Outcome {
        let started = ProcessInfo.processInfo.systemUptime
        let scheduler = SerialRunLoopScheduler()
        // The one reading of the wall clock: when the run's clock reads zero, for `now()`.
        let epoch = RxTime.nanoseconds(Int64(Date().timeIntervalSince1970 * 1e9)) - scheduler.now
        let environment = ExpressionEnvironment(seed: seed, epoch: epoch, clock: { scheduler.now })
        let checkpoints = checkpointSession?.makeCheckpoints(scheduler: scheduler, interval: checkpointInterval)
        let compiled = try PipelineCompiler.compile(
            pipeline, scheduler: scheduler, environment: environment, baseDirectory: baseDirectory, log: RunLog.write,
            tracer: tracer.map { tracer in { tracer.record($0) } }, meters: meters,
            services: [session, liveTables] + (checkpoints.map { [$0] } ?? []),
            cores: ProcessInfo.processInfo.activeProcessorCount)
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
        // A signal drains the sources: their streams complete as if they had ended (nats and
        // httpServer stop reading first), what is in flight and what operators hold (open
        // windows) is written; the run is stopped outright after the timeout. With --state the
        // run stops at once instead: its last checkpoint keeps what operators hold, and the next
        // run goes on from it.
        let drainTimeout = self.drainTimeout
        let keepsOnStop = !drain
        defer { control.uninstall() }
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
    let compiled: CompiledPipeline
    let checkpoints: Checkpoints?
    var run: PipelineRun?
    var outcome: PipelineRun.Outcome?
    var stopping: Stopping?

    init(compiled: CompiledPipeline, checkpoints: Checkpoints?) {
        self.compiled = compiled
        self.checkpoints = checkpoints
    }
}
