import Reactive

/// A stream with several readers: one subscription upstream, connected after all readers are in.
final class Multicast {
    let subject = PublishSubject<Value>()
    let source: Observable<Value>
    private var connected = false

    init(source: Observable<Value>) {
        self.source = source
    }

    var observable: Observable<Value> { subject.asObservable() }

    func connect(in lifetime: Lifetime) {
        guard !connected else { return }
        connected = true
        source.subscribe(AnyObserver(subject.on), in: lifetime.makeChild())
    }
}

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
        /// The meter of the last stage of each stream built so far.
        var lastMeters: [String: ComponentMeter] = [:]
        /// A component's meter, made before the component is built so that it can find it.
        func meter(stream: String, part: String, _ spec: ComponentSpec, key: String) -> ComponentMeter? {
            if spec.kind == .operator && meters?.metersOperators == false { return nil }
            return meters?.add(
                place: RunMeters.place(pipeline, stream: stream, part), kind: spec.kind, component: spec.name,
                upstream: lastMeters[stream], key: key)
        }
        func metered(_ observable: Observable<Value>, stream: String, _ meter: ComponentMeter?) -> Observable<Value> {
            guard let meter else { return observable }
            lastMeters[stream] = meter
            return RunMeters.metered(observable, meter)
        }
        func traced(_ observable: Observable<Value>, _ label: String, _ location: SourceLocation) -> Observable<Value> {
            guard let tracer else { return observable }
            func record(_ event: Event<Value>) {
                tracer(TraceEvent(label: label, location: location, time: scheduler.now, event: event))
            }
            return observable.do(
                onNext: { record(.next($0)) }, onError: { record(.error($0)) }, onCompleted: { record(.completed) })
        }
        var built: [String: Observable<Value>] = [:]
        var multicasts: [Multicast] = []
        var sideSubjects: [String: PublishSubject<Value>] = [:]
        let services = SharedServices()
        for service in extraServices { services.insert(service) }
        if let meters {
            services.insert(meters)
            services.insert(meters.readiness)
        }
        func sideKey(_ stream: String, _ index: Int, _ side: String) -> String { "\(stream)#\(index)#\(side)" }
        var sideStates: [String: SideStreamState] = [:]
        for (_, target) in pipeline.sideStreams {
            let key = sideKey(target.stream, target.operatorIndex, target.side)
            if sideSubjects[key] == nil {
                let subject = PublishSubject<Value>()
                sideSubjects[key] = subject
                if SideStreamState.names.contains(target.side) { sideStates[key] = SideStreamState(subject) }
            }
        }
        func resolve(_ name: String) -> Observable<Value>? {
            if let stream = built[name] { return stream }
            if let target = pipeline.sideStreams[name] {
                let key = sideKey(target.stream, target.operatorIndex, target.side)
                if let state = sideStates[key] { return state.observable }
                return sideSubjects[key]?.asObservable()
            }
            return nil
        }
        func sides(of spec: ComponentSpec, stream: String, index: Int) -> [String: PublishSubject<Value>] {
            var sides: [String: PublishSubject<Value>] = [:]
            for side in spec.sideStreams {
                if let subject = sideSubjects[sideKey(stream, index, side)] { sides[side] = subject }
            }
            return sides
        }
        /// `observable`, ending the side streams when it ends, so the streams reading them can end too.
        func endingSides(_ observable: Observable<Value>, _ sides: [String: PublishSubject<Value>]) -> Observable<Value>
        {
            guard !sides.isEmpty else { return observable }
            let subjects = Array(sides.values)
            return observable.do(
                onError: { _ in for subject in subjects { subject.onCompleted() } },
                onCompleted: { for subject in subjects { subject.onCompleted() } })
        }
        /// A component's context; one inside another's inner chain or source keeps no checkpoints
        /// (`key` empty) and counts on its owner's meter (`meterKey`).
        /// The clock each stream built so far ends on (its `eventTime`'s, or one it reads).
        var clocks: [String: any SchedulerType] = [:]
        func context(
            for component: ValidatedComponent, key: String, sides: [String: PublishSubject<Value>],
            streamName: String? = nil, meterKey: String? = nil, group: String? = nil,
            clock: any SchedulerType = scheduler, services scope: SharedServices? = nil
        ) -> ComponentContext {
            let scope = scope ?? services
            let meterKey = meterKey ?? key
            return ComponentContext(
                scheduler: clock, environment: environment, componentName: component.spec.name,
                location: component.use.location, baseDirectory: baseDirectory, log: log, streamResolver: resolve,
                sourceBuilder: { inner in
                    try buildSource(
                        inner.spec, inner.parameters, inner.location, key: "", sides: [:], meterKey: meterKey,
                        clock: clock)
                },
                chainBuilder: { chain, prefix, placement in
                    try buildChain(
                        chain, meterKey: meterKey, keyPrefix: prefix, clock: clock, placement: placement,
                        services: scope)
                },
                sideStreams: sides, services: scope, streamName: streamName, checkpointKey: key,
                checkpointGroup: group, meterKey: meterKey,
                onError: component.spec.routesElementErrors ? component.parameters[ElementErrors.onError] : .fail)
        }
        /// The operators of an inner chain, each with a context of its own that keeps no checkpoints,
        /// or with `keyPrefix` (one group's chain), checkpoints under keys that start with it. With
        /// a `placement` (a partition's chain), it runs on the placement's clock and services, and
        /// each operator is handed what the one before it handed on, as in a stream.
        func buildChain(
            _ chain: ParameterValues.OperatorChain, meterKey: String, keyPrefix: String, clock: any SchedulerType,
            placement: ChainPlacement? = nil, services scope: SharedServices
        ) throws -> PipelineOperator {
            var clock = placement?.clock ?? clock
            let chainServices = placement.map { placement in
                let local = SharedServices(parent: scope)
                for service in placement.services { local.insert(service) }
                return local
            }
            var handOn = placement?.handedOn
            let operators = try chain.operators.enumerated().map { index, component -> PipelineOperator in
                guard let factory = component.spec.factory.operatorFactory else {
                    preconditionFailure("validated as an operator")
                }
                let key = keyPrefix.isEmpty ? "" : "\(keyPrefix) ops#\(index) \(component.spec.name)"
                let operatorContext = context(
                    for: component, key: key, sides: [:], meterKey: meterKey,
                    group: keyPrefix.isEmpty ? nil : keyPrefix, clock: clock, services: chainServices ?? scope)
                guard placement != nil else { return try factory(component.parameters, operatorContext) }
                operatorContext.handedOn = handOn
                let apply = try factory(component.parameters, operatorContext)
                if let after = operatorContext.clockAfter { clock = after }
                handOn = operatorContext.handOn
                return apply
            }
            return { source in operators.reduce(source) { stream, apply in apply(stream) } }
        }
        func buildSource(
            _ spec: ComponentSpec, _ parameters: ParameterValues, _ location: SourceLocation, key: String,
            sides: [String: PublishSubject<Value>], meterKey: String? = nil, clock: any SchedulerType = scheduler
        ) throws -> PipelineSource {
            guard case .source(let factory) = spec.factory else { preconditionFailure("validated as a source") }
            let component = ValidatedComponent(
                use: ComponentUse(name: spec.name, location: location, parameters: nil, id: nil), spec: spec,
                parameters: parameters)
            return try factory(
                parameters, context(for: component, key: key, sides: sides, meterKey: meterKey, clock: clock))
        }
        for stream in pipeline.streams {
            var observable: Observable<Value>
            var handedToSource = 0
            var clock: any SchedulerType = scheduler
            switch stream.origin {
            case .stream(let name):
                observable = resolve(name) ?? .empty()
                clock = clocks[name] ?? scheduler
                if let upstream = lastMeters[name] { lastMeters[stream.name] = upstream }
            case .component(let component):
                let sourceSides = sides(of: component.spec, stream: stream.name, index: Validator.sourceIndex)
                let key = CheckpointPlan.sourceKey(stream.name, component.spec.name)
                let sourceMeter = meter(stream: stream.name, part: "source", component.spec, key: key)
                let source = try buildSource(
                    component.spec, component.parameters, component.use.location, key: key, sides: sourceSides)
                observable = source.make(.null)
                // `parallel: N`: the element-wise operators right after a source that can run them
                // on several threads are handed to it (while they may run on several threads and
                // have no side streams), unless they are watched one by one.
                let handable = stream.operators.enumerated().prefix { index, operation in
                    guard case .elementwise = operation.spec.factory else { return false }
                    return Self.runsInParallel(operation)
                        && sides(of: operation.spec, stream: stream.name, index: index).isEmpty
                }.count
                // Without `parallel:`, a pipeline that is nothing but such a stretch between a
                // source and its sinks uses every core.
                let workers =
                    pipeline.spec.parallel
                    ?? (pipeline.streams.count == 1 && handable == stream.operators.count ? min(cores, 64) : 1)
                if workers > 1, handable > 0, let runParallel = source.parallel, tracer == nil,
                    meters?.metersOperators != true
                {
                    var makers: [() -> ElementStep] = []
                    for (index, operation) in stream.operators.prefix(handable).enumerated() {
                        guard case .elementwise(let makeStep) = operation.spec.factory else { break }
                        let operatorKey = CheckpointPlan.operatorKey(stream.name, index, operation.spec.name)
                        makers.append(
                            try makeStep(operation.parameters, context(for: operation, key: operatorKey, sides: [:])))
                    }
                    handedToSource = makers.count
                    observable = runParallel(
                        .null,
                        ParallelStretch(
                            workers: workers, makeStep: { ElementSteps.compose(makers.map { $0() }) },
                            dropped: { sourceMeter?.countUnemitted($0) }))
                }
                // A signal completes it as if it had ended, unless it drains itself (nats, httpServer).
                observable = services.object(SourceDrains.self) { SourceDrains() }.completing(observable)
                observable = endingSides(observable, sourceSides)
                observable = traced(observable, "\(stream.name)#source \(component.spec.name)", component.use.location)
                observable = metered(observable, stream: stream.name, sourceMeter)
            }
            var fusing: [() -> ElementStep] = []
            // What the operator just built hands the one right after it (nil past any other).
            var handOn: AnyObject?
            let sidesOf = sides(of:stream:index:)
            for (index, component) in stream.operators.enumerated() where index >= handedToSource {
                let sides = sides(of: component.spec, stream: stream.name, index: index)
                let key = CheckpointPlan.operatorKey(stream.name, index, component.spec.name)
                let operatorMeter = meter(stream: stream.name, part: "ops.\(index)", component.spec, key: key)
                // Adjacent element-wise operators nobody watches one by one (no trace, no meter,
                // no side stream) run as one step.
                if case .elementwise(let makeStep) = component.spec.factory, tracer == nil, operatorMeter == nil,
                    sides.isEmpty
                {
                    handOn = nil
                    fusing.append(
                        try makeStep(
                            component.parameters, context(for: component, key: key, sides: sides, clock: clock)))
                    let next = index + 1 < stream.operators.count ? stream.operators[index + 1] : nil
                    if case .elementwise = next?.spec.factory,
                        sidesOf(next!.spec, stream.name, index + 1).isEmpty
                    {
                        continue
                    }
                    observable = ElementSteps.fused(fusing)(observable)
                    fusing = []
                    continue
                }
                guard let factory = component.spec.factory.operatorFactory else {
                    preconditionFailure("validated as an operator")
                }
                let operatorContext = context(for: component, key: key, sides: sides, clock: clock)
                operatorContext.handedOn = handOn
                let apply = try factory(component.parameters, operatorContext)
                if let after = operatorContext.clockAfter { clock = after }
                handOn = operatorContext.handOn
                let applied = endingSides(apply(observable), sides)
                observable = traced(applied, "\(stream.name)#\(index) \(component.spec.name)", component.use.location)
                observable = metered(observable, stream: stream.name, operatorMeter)
            }
            if pipeline.readerCounts[stream.name, default: 0] > 1 {
                let multicast = Multicast(source: observable)
                multicasts.append(multicast)
                observable = multicast.observable
            }
            built[stream.name] = observable
            clocks[stream.name] = clock
        }
        var readsSideStreams: Set<String> = Set(pipeline.sideStreams.keys)
        for stream in pipeline.streams
        where stream.dependencies.contains(where: { $0.isSideStream || readsSideStreams.contains($0.name) }) {
            readsSideStreams.insert(stream.name)
        }
        var sinks: [CompiledPipeline.CompiledSink] = []
        for (index, (streamName, component)) in pipeline.sinks.enumerated() {
            guard case .sink(let factory) = component.spec.factory else { preconditionFailure("validated as a sink") }
            let key = CheckpointPlan.sinkKey(index, streamName, component.spec.name)
            let sinkSides = sides(of: component.spec, stream: streamName, index: Validator.sinkIndex(index))
            let meter = meters?.add(
                place: RunMeters.sinkPlace(pipeline, index: index), kind: .sink, component: component.spec.name,
                upstream: lastMeters[streamName], key: key)
            let sink = try factory(
                component.parameters, context(for: component, key: key, sides: sinkSides, streamName: streamName))
            sinks.append(
                CompiledPipeline.CompiledSink(
                    name: component.spec.name, location: component.use.location, streamName: streamName, sink: sink,
                    input: resolve(streamName) ?? .empty(), sideStreams: Array(sinkSides.values),
                    readsSideStreams: readsSideStreams.contains(streamName), meter: meter))
        }
        var streams = built
        for name in pipeline.sideStreams.keys { streams[name] = resolve(name) }
        // Components resolve streams while they are built, never later; dropping them here ends
        // the cycle stream → component closure → context → resolver → stream.
        built.removeAll()
        return CompiledPipeline(
            streams: streams, sinks: sinks, multicasts: multicasts, states: Array(sideStates.values),
            skipped: services.object(SkippedElements.self) { SkippedElements() }, scheduler: scheduler,
            ending: services.object(RunEnding.self) { RunEnding() },
            drains: services.object(SourceDrains.self) { SourceDrains() },
            checkpoints: services.existing(Checkpoints.self))
    }
}

/// A side stream that carries a state (`executing`, `enabled`): a reader that subscribes after
/// the state was last set gets its current value first, as the Action library's `executing` and
/// `enabled` do. Without it, a stream built after its operator started would miss the initial
/// `false`.
final class SideStreamState {
    /// The side streams that are states; the others (`errors`, `elements`) are events.
    static let names: Set<String> = ["executing", "enabled"]
    let subject: PublishSubject<Value>
    var latest: Value?

    init(_ subject: PublishSubject<Value>) {
        self.subject = subject
    }

    /// Starts keeping the latest value, for the run's lifetime (before any reader subscribes).
    func follow(in lifetime: Lifetime) {
        subject.asObservable().subscribe(
            AnyObserver { event in
                if case .next(let value) = event { self.latest = value }
            }, in: lifetime.makeChild())
    }

    /// The stream as a reader sees it: the current value, then every change.
    var observable: Observable<Value> {
        Observable.deferred { [self] in
            guard let latest else { return subject.asObservable() }
            return subject.asObservable().startWith(latest)
        }
    }
}

extension PipelineCompiler {
    /// Whether an element-wise operator may run on several threads: it fails the run on a bad
    /// element (no `onError` routing, which counts and reports on the pipeline's thread) and its
    /// expressions call nothing that depends on time or order; a template may, so none is run.
    public static func runsInParallel(_ component: ValidatedComponent) -> Bool {
        if component.spec.routesElementErrors && component.parameters[ElementErrors.onError] != .fail { return false }
        return component.parameters.values.values.allSatisfy { value in
            if let expression = value as? Expression { return expression.isPure }
            return !(value is Template)
        }
    }
}
