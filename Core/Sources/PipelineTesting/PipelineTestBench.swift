@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import PipelineHost
@_spi(Host) @_spi(Components) import PluginAPI
@_spi(Components) import Reactive

/// Runs pipelines made of a plugin's components on a virtual clock, through the host `rivulet`
/// runs them with, and keeps what reaches their sink: a plugin's tests in a few lines.
///
/// ```swift
/// let bench = try PipelineTestBench(plugin: rivuletPluginRegister)
/// let run = try bench.run("""
///     source: { events: [{ at: 0ms, next: "Hello, World!" }, { at: 10ms, complete: true }] }
///     ops: [slugify]
///     sink: record
///     """)
/// XCTAssertEqual(run.values, ["hello-world"])
/// ```
///
/// Besides the plugin's components, a pipeline has the `events` source (a timeline, inline or
/// as marbles, exactly as in `rivulet`) and the `record` sink; the rest of `rivulet`'s built-in
/// components are not part of the core a plugin links.
public final class PipelineTestBench {
    private let registry = ComponentRegistry()
    /// The recorder of the run in progress (a pipeline may name `record` more than once).
    private var recorder: RecordingSink?
    private var clock: VirtualTimeScheduler?

    /// A bench with the components `register` (a plugin's `rivulet_plugin_register` entry
    /// point) registers; throws what the plugin reported, or a name taken twice.
    public convenience init(plugin register: (UnsafeMutableRawPointer) -> Int32) throws {
        try self.init(components: [])
        let registrar = PluginRegistrar(registry: registry, origin: "plugin under test")
        let status = register(Unmanaged.passUnretained(registrar).toOpaque())
        if let failure = registrar.failure { throw PipelineTestBenchError(description: failure) }
        guard status == 0 else {
            throw PipelineTestBenchError(description: "the plugin's register entry point returned \(status)")
        }
    }

    /// A bench with `components` (specs a test builds itself, or a plugin's, registered directly).
    public init(components: [ComponentSpec]) throws {
        try registry.register(Timelines.events, origin: "rivulet")
        try registry.register(recordSpec, origin: "rivulet")
        for spec in components {
            do { try registry.register(spec, origin: "test") } catch {
                throw PipelineTestBenchError(description: "\(error)")
            }
        }
    }

    /// What the plugin registered, and the bench's own `events` and `record`.
    public var componentNames: [String] { registry.all.map(\.name) }

    /// Checks `pipeline` as `rivulet lint` does (a problem throws with its `line:col`), then runs
    /// it on a virtual clock until it ends, nothing is left to run, or `limit` passes.
    public func run(_ pipeline: String, until limit: RxTimeInterval? = nil, seed: UInt64 = 1) throws
        -> PipelineTestRun
    {
        let loaded = PipelineLoader(registry: registry, environment: [:]).load(text: pipeline, path: "pipeline.yaml")
        guard let checked = loaded.pipeline, !loaded.diagnostics.contains(where: { $0.severity == .error }) else {
            throw PipelineTestBenchError(
                description: loaded.diagnostics.map(\.description).joined(separator: "\n"))
        }
        let clock = VirtualTimeScheduler(resolution: .microseconds(1))
        let recorder = RecordingSink(time: { Int(clock.clock) })
        self.clock = clock
        self.recorder = recorder
        defer {
            self.recorder = nil
            self.clock = nil
        }
        var setup = PipelineHost.Setup()
        setup.seed = seed
        var logged: [String] = []
        setup.log = { logged.append($0.message) }
        let host: PipelineHost
        do { host = try PipelineHost(checked, on: clock, setup) } catch {
            throw PipelineTestBenchError(description: "\(error)")
        }
        host.start()
        host.runToEnd(on: clock, until: limit)
        let events = recorder.events.map { (at: RxTimeInterval.microseconds($0.time), event: $0.event) }
        let outcome: PipelineTestRun.Outcome =
            switch host.outcome {
            case .completed?: .completed
            case .failed(let error)?: .failed("\(error)")
            case .cancelled?, nil: .stopped
            }
        return PipelineTestRun(events: events, outcome: outcome, logged: logged)
    }

    /// `record`: the sink whose events a run keeps.
    private var recordSpec: ComponentSpec {
        ComponentSpec(
            name: "record", summary: "Keeps every event it receives, with its time, for the test.",
            example: "sink: record",
            factory: .sink { [weak self] _, _ in
                guard let recorder = self?.recorder else {
                    throw PipelineTestBenchError(description: "record is a sink of a PipelineTestBench run")
                }
                return recorder
            })
    }
}

/// What a run on a `PipelineTestBench` did.
public struct PipelineTestRun {
    /// How a run ended.
    public enum Outcome: Equatable, Sendable {
        /// Its sources completed and everything was written.
        case completed
        /// It failed with this message (an error no `onError` handled).
        case failed(String)
        /// It was stopped at the run's limit, or nothing was left to run while it was open.
        case stopped
    }

    /// Every event `record` received, with the virtual time it came at.
    public let events: [(at: RxTimeInterval, event: Event<Value>)]
    /// How the run ended.
    public let outcome: Outcome
    /// What the components logged (`context.log`), in order.
    public let logged: [String]

    /// The elements `record` received, in order.
    public var values: [Value] {
        events.compactMap { if case .next(let value) = $0.event { value } else { nil } }
    }

    /// The elements with their times, as `(milliseconds, element)`: what a timed operator's
    /// test compares.
    public var timedValues: [(milliseconds: Int64, value: Value)] {
        events.compactMap { recorded in
            guard case .next(let value) = recorded.event else { return nil }
            return (recorded.at.totalNanoseconds / 1_000_000, value)
        }
    }
}

/// A pipeline a bench could not check or build, or a plugin it could not register.
public struct PipelineTestBenchError: Error, CustomStringConvertible {
    /// What went wrong, as `rivulet` would say it (`pipeline.yaml:LINE:COL: error: …` for a
    /// pipeline that does not check).
    public let description: String
}
