import ArgumentParser
import Components
import Foundation
import Logging
import NIOCore
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import PipelineHost
@_spi(Components) import Reactive
import StateStore

/// What a run says while and after it runs: the summary, the progress line, the metrics endpoint
/// and the live view.
extension RunCommand {
    /// With --metrics: the run's meters and the endpoint serving them, listening before the run
    /// starts; an address that cannot be listened on is an error of the command line (exit 2).
    func startMetricsEndpoint(_ exporter: RunMetricsExporter, live: LiveView?) throws -> MetricsEndpoint? {
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
    static func name(of pipeline: ValidatedPipeline) -> String {
        pipeline.spec.name ?? URL(fileURLWithPath: pipeline.spec.file).deletingPathExtension().lastPathComponent
    }

    /// At the end of a run: the progress line cleared, the warnings of `onError: skip`, the
    /// error a failed run ended with, then the summary line (and with --summary, the table).
    func report(
        _ compiled: CompiledPipeline, _ outcome: PipelineRun.Outcome?, meters: RunMeters, progress: ProgressLine?,
        started: Double, stopping: PipelineHost.Stopping? = nil
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
        let summary = RunSummary(
            meters: meters, skipped: compiled.skipped.errors, dropped: compiled.skipped.dropped,
            failed: ending == .failed,
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
                "late": .stringConvertible(summary.late), "seconds": .stringConvertible(summary.seconds),
            ])
        if ending == .interrupted, let stopping {
            RunLog.info(stopping.line)
        }
    }

    /// The progress line, when this run shows one.
    func startProgress(_ meters: RunMeters) -> ProgressLine? {
        ProgressLine.isWanted(quiet: quiet, meters: meters) ? ProgressLine(meters: meters) : nil
    }

    /// With --ui at an address of its own: the live view's server (its page, `/stats`, `/tap`).
    func startLiveView(_ exporter: RunMetricsExporter, _ live: LiveView?) throws -> MetricsEndpoint? {
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
    func liveView(_ pipeline: ValidatedPipeline) -> LiveView? {
        guard ui != nil else { return nil }
        return LiveView(pipeline, title: Self.name(of: pipeline), tables: liveTables)
    }

    /// A listening error as a person reads it (NIO's text names the call and the errno).
    static func describe(_ error: any Error) -> String {
        if let error = error as? IOError {
            return error.errnoCode == EADDRINUSE
                ? "the address is already in use" : String(cString: strerror(error.errnoCode))
        }
        return "\(error)"
    }

    /// What `onError: skip` dropped, one warning per component.
    func reportSkipped(_ compiled: CompiledPipeline) {
        for line in compiled.skipped.summary { RunLog.warning(line) }
    }

    func log(_ line: String) { RunLog.info(line) }
}

extension PipelineHost.Stopping {
    /// What became of what operators held (open windows, pending timers), said after the run's
    /// summary.
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
        case .beforeStart:
            return "stopped before the pipeline started: nothing was read"
        }
    }
}
