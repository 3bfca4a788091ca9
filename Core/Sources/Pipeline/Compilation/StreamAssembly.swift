import Reactive

/// The compiler's wiring, as its `CompilePlan` says: each stream built after those it reads (its
/// source, or the stream it reads, then its operators: those the source accepted to run in
/// parallel, then fused steps and operators applied alone with their side streams, trace and
/// meter), shared through a `Multicast` when several read it; then the sinks.
struct StreamAssembly {
    let contexts: ComponentContexts
    let instrumentation: CompileInstrumentation
    /// The streams read more than once, connected when the run starts.
    private(set) var multicasts: [Multicast] = []
    /// The clock each stream built so far ends on (its `eventTime`'s, or one it reads).
    private var clocks: [String: any SchedulerType] = [:]

    init(contexts: ComponentContexts, instrumentation: CompileInstrumentation) {
        self.contexts = contexts
        self.instrumentation = instrumentation
    }

    private var pipeline: ValidatedPipeline { contexts.pipeline }

    /// Builds `stream` as `plan` says (every stream it reads is built already).
    mutating func build(_ stream: ValidatedStream, _ plan: CompilePlan.StreamPlan) throws {
        var observable: Observable<Value>
        var handedToSource = 0
        var clock = contexts.scheduler
        switch stream.origin {
        case .stream(let name):
            observable = contexts.resolve(name) ?? .empty()
            clock = clocks[name] ?? contexts.scheduler
            instrumentation.continues(stream.name, from: name)
        case .component(let component):
            (observable, handedToSource) = try source(component, of: stream, offer: plan.parallel)
        }
        (observable, clock) = try apply(
            plan.steps(from: handedToSource), of: stream, splits: plan.splits, to: observable, clock: clock)
        if plan.isShared {
            let multicast = Multicast(source: observable)
            multicasts.append(multicast)
            observable = multicast.observable
        }
        contexts.add(observable, named: stream.name)
        clocks[stream.name] = clock
    }

    /// A stream's source, with the operators it accepted (how many) of `offer` to run in parallel.
    private func source(
        _ component: ValidatedComponent, of stream: ValidatedStream, offer: CompilePlan.ParallelOffer?
    ) throws -> (Observable<Value>, handed: Int) {
        let sides = contexts.sides(of: component.spec, stream: stream.name, index: Validator.sourceIndex)
        let key = CheckpointPlan.sourceKey(stream.name, component.spec.name)
        let meter = instrumentation.meter(stream: stream.name, part: "source", component.spec, key: key)
        let source = try contexts.buildSource(
            component.spec, component.parameters, component.use.location, key: key, sides: sides)
        var observable = source.make(.null)
        var handed = 0
        if let offer, let stretch = try parallelStretch(offer, of: stream, after: source, meter: meter) {
            (observable, handed) = stretch
        }
        // A signal completes it as if it had ended, unless it drains itself (nats, httpServer).
        observable = contexts.services.object(SourceDrains.self) { SourceDrains() }.completing(observable)
        observable = Self.endingSides(observable, sides)
        observable = instrumentation.traced(
            observable, "\(stream.name)#source \(component.spec.name)", component.use.location)
        return (instrumentation.metered(observable, stream: stream.name, meter), handed)
    }

    /// The operators `offer` names, run by `source` on several threads; nil when it cannot.
    private func parallelStretch(
        _ offer: CompilePlan.ParallelOffer, of stream: ValidatedStream, after source: PipelineSource,
        meter: ComponentMeter?
    ) throws -> (Observable<Value>, handed: Int)? {
        guard let runParallel = source.parallel else { return nil }
        let makers = try (0..<offer.operators).map {
            ElementSteps.Maker(try elementStep(stream, $0, clock: contexts.scheduler))
        }
        let stretch = ParallelStretch(
            workers: offer.workers, makeStep: { ElementSteps.compose(makers.map { .init($0.make()) }) },
            dropped: { meter?.countUnemitted($0) })
        return (runParallel(.null, stretch), offer.operators)
    }

    /// The element-wise operator at `index` of `stream`, made (without side streams) on `clock`.
    private func elementStep(_ stream: ValidatedStream, _ index: Int, clock: any SchedulerType) throws
        -> () -> ElementStep
    {
        let component = stream.operators[index]
        guard case .elementwise(let makeStep) = component.spec.factory else {
            preconditionFailure("planned as element-wise")
        }
        let key = CheckpointPlan.operatorKey(stream.name, index, component.spec.name)
        return try makeStep(component.parameters, contexts.context(for: component, key: key, sides: [:], clock: clock))
    }

    /// `steps` of `stream` applied to `source`, those in `splits` split by their key where the
    /// run's splitter does; the stream and the clock it ends on.
    private func apply(
        _ steps: [CompilePlan.Step], of stream: ValidatedStream, splits: [Int: CompilePlan.SplitKey],
        to source: Observable<Value>, clock: any SchedulerType
    ) throws -> (Observable<Value>, any SchedulerType) {
        var observable = source
        var clock = clock
        // What the operator just built hands the one right after it (nil past any other).
        var handOn: (any OperatorOffer)?
        for step in steps {
            switch step {
            case .fused(let indexes):
                handOn = nil
                observable = ElementSteps.fused(
                    try indexes.map { ElementSteps.Maker(try elementStep(stream, $0, clock: clock)) })(
                        observable)
            case .alone(let index):
                let component = stream.operators[index]
                let sides = contexts.sides(of: component.spec, stream: stream.name, index: index)
                let key = CheckpointPlan.operatorKey(stream.name, index, component.spec.name)
                let meter = instrumentation.meter(stream: stream.name, part: "ops.\(index)", component.spec, key: key)
                guard let factory = component.spec.factory.operatorFactory else {
                    preconditionFailure("validated as an operator")
                }
                let operatorContext = contexts.context(for: component, key: key, sides: sides, clock: clock)
                operatorContext.handedOn = handOn
                let split = try splits[index].flatMap { split in
                    try contexts.services.existing(KeyedSplitter.self)?.split(component, split.key, operatorContext)
                }
                let apply = try split ?? factory(component.parameters, operatorContext)
                if let after = operatorContext.clockAfter { clock = after }
                handOn = operatorContext.handOn
                let applied = Self.endingSides(apply(observable), sides)
                observable = instrumentation.traced(
                    applied, "\(stream.name)#\(index) \(component.spec.name)", component.use.location)
                observable = instrumentation.metered(observable, stream: stream.name, meter)
            }
        }
        return (observable, clock)
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
