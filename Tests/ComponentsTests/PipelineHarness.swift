@_spi(Host) import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import PipelineHost
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import XCTest

/// Compiles pipeline text with the built-in components plus a `record` sink, runs it on a virtual
/// clock with millisecond ticks, and returns what each `record` sink received, with times.
final class PipelineHarness {
    /// What a test records of a sink: every event, stamped with the clock's milliseconds.
    typealias Recorder = RecordingSink

    let scheduler = VirtualTimeScheduler(resolution: .milliseconds(1))
    var recorders: [String: Recorder] = [:]
    var logged: [String] = []
    /// The run summary's lines about elements dropped (`onError: skip`, late elements).
    var skipped: [String] = []
    var outcome: PipelineRun.Outcome?
    /// Components a test adds to the built-ins.
    var extraComponents: [ComponentSpec] = []
    /// Given to the compiler when set: the run is watched (`run --metrics`).
    var meters: RunMeters?
    /// The cores a pipeline without `parallel:` may use.
    var cores = 1

    /// The built-ins, with `stdout` writing to a recorder (labelled `stdout`) instead of the terminal,
    /// plus a `record` sink.
    func registry() -> ComponentRegistry {
        let registry = ComponentRegistry()
        for var spec in BuiltinComponents.all {
            if spec.name == "stdout" {
                spec.factory = .sink { _, _ in
                    let recorder = Recorder(time: { [scheduler = self.scheduler] in scheduler.clock })
                    self.recorders["stdout"] = recorder
                    return recorder
                }
            }
            try! registry.register(spec)
        }
        let label = Parameter<String>("label", default: "out", doc: "Which recorder.")
        try! registry.register(
            ComponentSpec(
                name: "record", summary: "Records events for tests.", parameters: [label], primary: label,
                example: "sink: record",
                factory: .sink { parameters, _ in
                    let recorder = Recorder(time: { [scheduler = self.scheduler] in scheduler.clock })
                    self.recorders[parameters[label]] = recorder
                    return recorder
                }), origin: "tests")
        for spec in extraComponents { try! registry.register(spec, origin: "tests") }
        return registry
    }

    /// Diagnostics for `text`, rendered `line:col: message`.
    func diagnostics(_ text: String) -> [String] {
        PipelineLoader(registry: registry(), environment: [:]).load(text: text, path: "p.yaml").diagnostics.map {
            "\($0.location.line):\($0.location.column): \($0.message)"
        }
    }

    /// Two streams paired by `zip` into `pairs` (recorded as `out`): a, b, c against 1, 2.
    static let zippedStreams = """
        streams:
          names:
            source: { events: [{ at: 10ms, next: a }, { at: 20ms, next: b }, { at: 30ms, next: c }, { at: 40ms, complete: true }] }
          numbers:
            source: { events: [{ at: 15ms, next: 1 }, { at: 50ms, next: 2 }, { at: 60ms, complete: true }] }
          pairs:
            source: { stream: names }
            ops:
              - zip: [numbers]
        sinks:
          - stream: pairs
            record: {}
        """

    /// Runs the pipeline file at `path`.
    @discardableResult
    func run(file path: String, until: Int = 600_000) throws -> PipelineHarness {
        guard let text = LocalFiles.readText(path) else { throw DiagnosticList([]) }
        return try run(text, until: until)
    }

    /// Runs `text` until the pipeline ends or `until` milliseconds.
    @discardableResult
    /// `rewrite` changes the checked pipeline before it is compiled, as `rivulet run` may.
    func run(
        _ text: String, until: Int = 60_000, seed: UInt64 = 1, services: [AnyObject] = [],
        rewrite: (ValidatedPipeline) -> ValidatedPipeline = { $0 }
    ) throws -> PipelineHarness {
        let loaded = PipelineLoader(registry: registry(), environment: [:]).load(text: text, path: "p.yaml")
        guard let pipeline = loaded.pipeline else {
            throw DiagnosticList(loaded.diagnostics)
        }
        let host = try PipelineHost(rewrite(pipeline), on: scheduler, setup(seed: seed, services: services))
        let run = host.start { self.outcome = $0 }
        scheduler.advance(to: until)
        if outcome == nil { run.dispose() }
        skipped = host.compiled.skipped.summary
        return self
    }

    /// Compiles and starts `text` without moving the clock: the test moves it with
    /// `scheduler.advance(to:)`, doing things between steps, then disposes of the run.
    func start(_ text: String, services: [AnyObject] = []) throws -> PipelineRun {
        let loaded = PipelineLoader(registry: registry(), environment: [:]).load(text: text, path: "p.yaml")
        guard let pipeline = loaded.pipeline else { throw DiagnosticList(loaded.diagnostics) }
        let host = try PipelineHost(pipeline, on: scheduler, setup(seed: 1, services: services, cores: 1))
        return host.start { self.outcome = $0 }
    }

    /// What the harness's runs compile with.
    private func setup(seed: UInt64, services: [AnyObject], cores: Int? = nil) -> PipelineHost.Setup {
        var setup = PipelineHost.Setup()
        setup.seed = seed
        setup.log = { self.logged.append($0.message) }
        setup.meters = meters
        setup.services = [BuiltinComponents.keyedSplitter] + services
        setup.cores = cores ?? self.cores
        return setup
    }

    /// What the `record` sink labelled `label` received: `[time: value]` lines.
    func events(_ label: String = "out") -> [String] {
        (recorders[label]?.events ?? []).map { time, event in
            switch event {
            case .next(let value): return "\(time): \(value)"
            case .error(let error): return "\(time): error \(error)"
            case .completed: return "\(time): completed"
            }
        }
    }
}
