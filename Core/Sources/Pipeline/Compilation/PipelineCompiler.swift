import Reactive

/// One event leaving a source or operator, for `--trace`.
@_spi(Host) public struct TraceEvent {
    /// `stream#index name`, such as `main#1 debounce` (`main#source events` for the source).
    public let label: String
    /// Where the component is in the file.
    public let location: SourceLocation
    /// When, on the pipeline's clock.
    public let time: RxTime
    /// What.
    public let event: Event<Value>
}

/// Builds a checked pipeline's components, on one scheduler, into a `CompiledPipeline`.
@_spi(Host) public struct PipelineCompiler {
    /// Compiles `pipeline` to run on `scheduler`. `log` receives what components log (the `log`
    /// operator's lines, retries, reconnections);
    /// `tracer`, if given, every event leaving every source and operator; `meters`, if given,
    /// counts them (and what each sink receives) for a watched run; `services` are objects the
    /// components find by type through `ComponentContext.existing` and `shared` (the run's HTTP
    /// session, say). `cores` is how many threads a file without `parallel:` may use: all of
    /// them for a pipeline that is only a JSON Lines source, operators that can run in parallel
    /// and its sinks, one otherwise.
    public static func compile(
        _ pipeline: ValidatedPipeline, scheduler: any SchedulerType, environment: ExpressionEnvironment,
        baseDirectory: String, log: @escaping (LogRecord) -> Void, tracer: ((TraceEvent) -> Void)? = nil,
        meters: RunMeters? = nil, services extraServices: [AnyObject] = [], cores: Int = 1
    ) throws -> CompiledPipeline {
        let services = SharedServices()
        for service in extraServices { services.insert(service) }
        services.insert(RunSources(pipeline))
        if let meters {
            services.insert(meters)
            services.insert(meters.readiness)
        }
        let contexts = ComponentContexts(
            pipeline: pipeline, scheduler: scheduler, environment: environment, baseDirectory: baseDirectory,
            log: log, services: services)
        let instrumentation = CompileInstrumentation(
            pipeline: pipeline, scheduler: scheduler, meters: meters, tracer: tracer)
        let plan = CompilePlan(
            pipeline, watchesOperators: instrumentation.watchesOperators, cores: cores,
            keepsState: services.existing(Checkpoints.self) != nil)
        var assembly = StreamAssembly(contexts: contexts, instrumentation: instrumentation)
        for (stream, streamPlan) in zip(pipeline.streams, plan.streams) { try assembly.build(stream, streamPlan) }
        let sinks = try assembly.sinks()
        // Components resolve streams while they are built, never later; dropping them here ends
        // the cycle stream → component closure → context → resolver → stream.
        let streams = contexts.dropStreams()
        return CompiledPipeline(
            streams: streams, sinks: sinks, multicasts: assembly.multicasts, states: Array(contexts.sideStates.values),
            skipped: services.object(SkippedElements.self) { SkippedElements() }, scheduler: scheduler,
            ending: services.object(RunEnding.self) { RunEnding() },
            drains: services.object(SourceDrains.self) { SourceDrains() },
            checkpoints: services.existing(Checkpoints.self))
    }
}

extension PipelineCompiler {
    /// Whether an operator may run off the pipeline's thread (an element-wise one on several at
    /// once): it says it keeps nothing but its own state (`Threading.ownStateOnly`), it fails
    /// the run on a bad element (no `onError` routing, which counts and reports on the pipeline's
    /// thread), and its expressions (those it parses when built too) call nothing that depends on
    /// time or order; a template may, so none is run.
    public static func runsInParallel(_ component: ValidatedComponent) -> Bool {
        guard component.spec.threading == .ownStateOnly else { return false }
        if component.spec.routesElementErrors && component.parameters[ElementErrors.onError] != .fail { return false }
        return component.parameters.values.values.allSatisfy(isPure)
            && component.spec.traits.builtExpressionsArePure(component.parameters)
    }

    /// Whether a checked parameter value calls nothing that depends on time or order, looking into
    /// lists and mappings (an `aggregate`'s `fields: {at: {max: now()}}`).
    private static func isPure(_ value: Any) -> Bool {
        switch value {
        case let expression as Expression: return expression.isPure
        case is Template: return false
        // Before `[Any]`, which a list of pairs also casts to (each pair then a tuple, unread).
        case let pairs as [(String, Any)]: return pairs.allSatisfy { isPure($0.1) }
        case let list as [Any]: return list.allSatisfy(isPure)
        case let nested as ParameterValues: return nested.values.values.allSatisfy(isPure)
        default: return true
        }
    }
}
