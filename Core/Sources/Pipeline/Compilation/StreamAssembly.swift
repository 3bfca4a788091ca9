import Reactive

/// The compiler's wiring: each stream built after those it reads (its source, or the stream it
/// reads, then its operators: handed to the source to run in parallel, fused when element-wise
/// and unwatched, else applied one by one with their side streams, trace and meter), shared
/// through a `Multicast` when several read it; then the sinks.
struct StreamAssembly {
    let contexts: ComponentContexts
    let instrumentation: CompileInstrumentation
    /// How many threads a file without `parallel:` may use (see `PipelineCompiler.compile`).
    let cores: Int
    /// The streams read more than once, connected when the run starts.
    private(set) var multicasts: [Multicast] = []
    /// The clock each stream built so far ends on (its `eventTime`'s, or one it reads).
    private var clocks: [String: any SchedulerType] = [:]

    init(contexts: ComponentContexts, instrumentation: CompileInstrumentation, cores: Int) {
        self.contexts = contexts
        self.instrumentation = instrumentation
        self.cores = cores
    }

    private var pipeline: ValidatedPipeline { contexts.pipeline }

    /// Builds `stream` (every stream it reads is built already).
    mutating func build(_ stream: ValidatedStream) throws {
        var observable: Observable<Value>
        var handedToSource = 0
        var clock = contexts.scheduler
        switch stream.origin {
        case .stream(let name):
            observable = contexts.resolve(name) ?? .empty()
            clock = clocks[name] ?? contexts.scheduler
            instrumentation.continues(stream.name, from: name)
        case .component(let component):
            (observable, handedToSource) = try source(component, of: stream)
        }
        (observable, clock) = try applyOperators(of: stream, to: observable, from: handedToSource, clock: clock)
        if pipeline.readerCounts[stream.name, default: 0] > 1 {
            let multicast = Multicast(source: observable)
            multicasts.append(multicast)
            observable = multicast.observable
        }
        contexts.add(observable, named: stream.name)
        clocks[stream.name] = clock
    }

    /// A stream's source, with the operators it was handed (how many) to run in parallel.
    private func source(_ component: ValidatedComponent, of stream: ValidatedStream) throws -> (
        Observable<Value>, handed: Int
    ) {
        let sides = contexts.sides(of: component.spec, stream: stream.name, index: Validator.sourceIndex)
        let key = CheckpointPlan.sourceKey(stream.name, component.spec.name)
        let meter = instrumentation.meter(stream: stream.name, part: "source", component.spec, key: key)
        let source = try contexts.buildSource(
            component.spec, component.parameters, component.use.location, key: key, sides: sides)
        var observable = source.make(.null)
        var handed = 0
        if let stretch = try parallelStretch(of: stream, after: source, meter: meter) {
            (observable, handed) = stretch
        }
        // A signal completes it as if it had ended, unless it drains itself (nats, httpServer).
        observable = contexts.services.object(SourceDrains.self) { SourceDrains() }.completing(observable)
        observable = Self.endingSides(observable, sides)
        observable = instrumentation.traced(
            observable, "\(stream.name)#source \(component.spec.name)", component.use.location)
        return (instrumentation.metered(observable, stream: stream.name, meter), handed)
    }

    /// `parallel: N`: the element-wise operators right after a source that can run them on
    /// several threads are handed to it (while they may run on several threads and have no side
    /// streams), unless they are watched one by one; nil when none is.
    private func parallelStretch(
        of stream: ValidatedStream, after source: PipelineSource, meter: ComponentMeter?
    ) throws -> (Observable<Value>, handed: Int)? {
        let handable = stream.operators.enumerated().prefix { index, operation in
            guard case .elementwise = operation.spec.factory else { return false }
            return PipelineCompiler.runsInParallel(operation)
                && contexts.sides(of: operation.spec, stream: stream.name, index: index).isEmpty
        }.count
        // Without `parallel:`, a pipeline that is nothing but such a stretch between a source and
        // its sinks uses every core.
        let workers =
            pipeline.spec.parallel
            ?? (pipeline.streams.count == 1 && handable == stream.operators.count ? min(cores, 64) : 1)
        guard workers > 1, handable > 0, let runParallel = source.parallel, !instrumentation.watchesOperators else {
            return nil
        }
        var makers: [() -> ElementStep] = []
        for (index, operation) in stream.operators.prefix(handable).enumerated() {
            guard case .elementwise(let makeStep) = operation.spec.factory else { break }
            let key = CheckpointPlan.operatorKey(stream.name, index, operation.spec.name)
            makers.append(try makeStep(operation.parameters, contexts.context(for: operation, key: key, sides: [:])))
        }
        let stretch = ParallelStretch(
            workers: workers, makeStep: { ElementSteps.compose(makers.map { $0() }) },
            dropped: { meter?.countUnemitted($0) })
        return (runParallel(.null, stretch), makers.count)
    }

    /// `stream`'s operators from `first` on, applied to `source`; the stream and the clock it ends on.
    private func applyOperators(
        of stream: ValidatedStream, to source: Observable<Value>, from first: Int, clock: any SchedulerType
    ) throws -> (Observable<Value>, any SchedulerType) {
        var observable = source
        var clock = clock
        var fusing: [() -> ElementStep] = []
        // What the operator just built hands the one right after it (nil past any other).
        var handOn: AnyObject?
        for (index, component) in stream.operators.enumerated() where index >= first {
            let sides = contexts.sides(of: component.spec, stream: stream.name, index: index)
            let key = CheckpointPlan.operatorKey(stream.name, index, component.spec.name)
            let meter = instrumentation.meter(stream: stream.name, part: "ops.\(index)", component.spec, key: key)
            // Adjacent element-wise operators nobody watches one by one (no trace, no meter, no
            // side stream) run as one step.
            if case .elementwise(let makeStep) = component.spec.factory, instrumentation.tracer == nil, meter == nil,
                sides.isEmpty
            {
                handOn = nil
                fusing.append(
                    try makeStep(
                        component.parameters, contexts.context(for: component, key: key, sides: sides, clock: clock)))
                if fusesWithNext(stream, index) { continue }
                observable = ElementSteps.fused(fusing)(observable)
                fusing = []
                continue
            }
            guard let factory = component.spec.factory.operatorFactory else {
                preconditionFailure("validated as an operator")
            }
            let operatorContext = contexts.context(for: component, key: key, sides: sides, clock: clock)
            operatorContext.handedOn = handOn
            let apply = try factory(component.parameters, operatorContext)
            if let after = operatorContext.clockAfter { clock = after }
            handOn = operatorContext.handOn
            let applied = Self.endingSides(apply(observable), sides)
            observable = instrumentation.traced(
                applied, "\(stream.name)#\(index) \(component.spec.name)", component.use.location)
            observable = instrumentation.metered(observable, stream: stream.name, meter)
        }
        return (observable, clock)
    }

    /// Whether the operator after `index` joins the element-wise step being fused.
    private func fusesWithNext(_ stream: ValidatedStream, _ index: Int) -> Bool {
        guard index + 1 < stream.operators.count else { return false }
        let next = stream.operators[index + 1]
        guard case .elementwise = next.spec.factory else { return false }
        return contexts.sides(of: next.spec, stream: stream.name, index: index + 1).isEmpty
    }

    /// `observable`, ending the side streams when it ends, so the streams reading them can end too.
    private static func endingSides(
        _ observable: Observable<Value>, _ sides: [String: PublishSubject<Value>]
    ) -> Observable<Value> {
        guard !sides.isEmpty else { return observable }
        let subjects = Array(sides.values)
        return observable.do(
            onError: { _ in for subject in subjects { subject.onCompleted() } },
            onCompleted: { for subject in subjects { subject.onCompleted() } })
    }

    /// The sinks, each reading its stream (built already).
    func sinks() throws -> [CompiledPipeline.CompiledSink] {
        var readsSideStreams: Set<String> = Set(pipeline.sideStreams.keys)
        for stream in pipeline.streams
        where stream.dependencies.contains(where: { $0.isSideStream || readsSideStreams.contains($0.name) }) {
            readsSideStreams.insert(stream.name)
        }
        var sinks: [CompiledPipeline.CompiledSink] = []
        for (index, (streamName, component)) in pipeline.sinks.enumerated() {
            guard case .sink(let factory) = component.spec.factory else { preconditionFailure("validated as a sink") }
            let key = CheckpointPlan.sinkKey(index, streamName, component.spec.name)
            let sides = contexts.sides(of: component.spec, stream: streamName, index: Validator.sinkIndex(index))
            let meter = instrumentation.sinkMeter(index: index, stream: streamName, component.spec, key: key)
            let sink = try factory(
                component.parameters, contexts.context(for: component, key: key, sides: sides, streamName: streamName))
            sinks.append(
                CompiledPipeline.CompiledSink(
                    name: component.spec.name, location: component.use.location, streamName: streamName, sink: sink,
                    input: contexts.resolve(streamName) ?? .empty(), sideStreams: Array(sides.values),
                    readsSideStreams: readsSideStreams.contains(streamName), meter: meter))
        }
        return sinks
    }
}
