import ArgumentParser
import Components
import Foundation
import Logging
import NIOCore
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive
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
    var liveTables: LiveTables { Self.tables }
    static let tables = LiveTables()

    /// The name of a pipeline read from standard input, in messages and checkpoints.
    static let standardInputName = "<stdin>"

    /// How the run's HTTP sources reach their servers.
    var session: HTTPSession {
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
        let control = RunControl<Version>()
        let reloadAction = LateAction()
        let (loader, loaded, pipeline) = try startSignalsAndLoad(control, reloadAction)
        // Under --watch, a change of the file (or SIGHUP) reads it again; only a valid version
        // replaces the running one.
        let reloader = Serialized((loader: loader, accepted: loaded.source))
        let reload: @Sendable () -> Void = { [self] in
            reloader.with { self.reload($0.loader, control, accepted: &$0.accepted) }
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
            guard watch else {
                try LeakCheck.verify()
                return try end(outcome, tracer: tracer)
            }
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

    /// Starts the thread that waits for signals, then loads the file. Nothing is read or written
    /// yet while the pipeline loads (from standard input, perhaps, which a signal does not
    /// interrupt): a signal then ends the process at once. An invalid file is reported (exit 2).
    private func startSignalsAndLoad(
        _ control: RunControl<Version>, _ reloadAction: LateAction
    ) throws -> (PipelineLoader, PipelineLoader.Loaded, ValidatedPipeline) {
        // Before any thread starts, so that none of them gets SIGHUP's default action (exit).
        if watch { SignalWatcher.blockHangUp() }
        SignalWatcher.start(hangUp: watch ? reloadAction.call : nil, giveUpAfter: drainTimeout + .seconds(5)) {
            control.stop()
        }
        control.install { _exit(128 + (SignalWatcher.received ?? SIGTERM)) }
        let loader = CommandSupport.loader(try CommandSupport.prepare(options))
        let loaded = load(loader)
        control.uninstall()
        guard let pipeline = loaded.pipeline else {
            CommandSupport.report(loaded)
            throw ExitCode(2)
        }
        return (loader, loaded, pipeline)
    }

    /// Under --watch: the file read again, and the running version replaced if the new one is
    /// valid and not the text of the last version accepted (`accepted`): a file saved unchanged,
    /// or a SIGHUP after the watcher already saw the change, restarts nothing.
    func reload(_ loader: PipelineLoader, _ control: RunControl<Version>, accepted: inout String?) {
        let next = load(loader)
        if let pipeline = next.pipeline {
            if next.source != nil && next.source == accepted {
                RunLog.info("watch: \(file) is the version already running; it goes on")
                return
            }
            accepted = next.source
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
    func load(_ loader: PipelineLoader) -> PipelineLoader.Loaded {
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
    func runOnce(
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
            return try run(
                pipeline, virtual: clock == .virtual, baseDirectory: version.loaded.baseDirectory, seed: seed,
                limit: until, tracer: tracer, meters: meters, session: session, control: control)
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
    func end(_ outcome: PipelineRun.Outcome, tracer: Tracer?) throws {
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
}
