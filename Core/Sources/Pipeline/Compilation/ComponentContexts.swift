import Reactive

/// What every component of one compiled pipeline is built with: its context (clock, services,
/// side streams, checkpoint key, meter key), the streams it may read (`resolve`), and the
/// builders of the inner sources and operator chains it may call while it runs. The contexts keep
/// it alive for the run; it lets go of the streams it built once the compiler is done
/// (`dropStreams`), so no cycle stream → component → context → this → stream outlives the run.
final class ComponentContexts {
    let pipeline: ValidatedPipeline
    let scheduler: any SchedulerType
    let services: SharedServices
    private let environment: ExpressionEnvironment
    private let baseDirectory: String
    private let log: (LogRecord) -> Void
    /// The streams built so far, by name (what `resolve` finds).
    private var built: [String: Observable<Value>] = [:]
    private var sideSubjects: [String: PublishSubject<Value>] = [:]
    /// The side streams that carry a state (`SideStreamState`), by key.
    private(set) var sideStates: [String: SideStreamState] = [:]

    /// Contexts for `pipeline`'s components, with a subject made for each side stream read.
    init(
        pipeline: ValidatedPipeline, scheduler: any SchedulerType, environment: ExpressionEnvironment,
        baseDirectory: String, log: @escaping (LogRecord) -> Void, services: SharedServices
    ) {
        self.pipeline = pipeline
        self.scheduler = scheduler
        self.environment = environment
        self.baseDirectory = baseDirectory
        self.log = log
        self.services = services
        for (_, target) in pipeline.sideStreams {
            let key = Self.sideKey(target.stream, target.operatorIndex, target.side)
            if sideSubjects[key] == nil {
                let subject = PublishSubject<Value>()
                sideSubjects[key] = subject
                if SideStreamState.names.contains(target.side) { sideStates[key] = SideStreamState(subject) }
            }
        }
    }

    private static func sideKey(_ stream: String, _ index: Int, _ side: String) -> String {
        "\(stream)#\(index)#\(side)"
    }

    /// `stream` is built: readers after it find it by name.
    func add(_ stream: Observable<Value>, named name: String) { built[name] = stream }

    /// Every stream built so far, and each side stream, by name; then forgets the built ones
    /// (components resolve streams while they are built, never later).
    func dropStreams() -> [String: Observable<Value>] {
        var streams = built
        for name in pipeline.sideStreams.keys { streams[name] = resolve(name) }
        built.removeAll()
        return streams
    }

    /// A stream built so far, or a side stream, by name.
    func resolve(_ name: String) -> Observable<Value>? {
        if let stream = built[name] { return stream }
        if let target = pipeline.sideStreams[name] {
            let key = Self.sideKey(target.stream, target.operatorIndex, target.side)
            if let state = sideStates[key] { return state.observable }
            return sideSubjects[key]?.asObservable()
        }
        return nil
    }

    /// The side streams somebody reads of the component `spec` at `index` of `stream`.
    func sides(of spec: ComponentSpec, stream: String, index: Int) -> [String: PublishSubject<Value>] {
        var sides: [String: PublishSubject<Value>] = [:]
        for side in spec.sideStreams {
            if let subject = sideSubjects[Self.sideKey(stream, index, side)] { sides[side] = subject }
        }
        return sides
    }

    /// A component's context; one inside another's inner chain or source keeps no checkpoints
    /// (`key` empty) and counts on its owner's meter (`meterKey`).
    func context(
        for component: ValidatedComponent, key: String, sides: [String: PublishSubject<Value>],
        streamName: String? = nil, meterKey: String? = nil, group: String? = nil, clock: (any SchedulerType)? = nil,
        services scope: SharedServices? = nil
    ) -> ComponentContext {
        let scope = scope ?? services
        let meterKey = meterKey ?? key
        let clock = clock ?? scheduler
        return ComponentContext(
            scheduler: clock, environment: environment, componentName: component.spec.name,
            location: component.use.location, baseDirectory: baseDirectory, log: log, streamResolver: resolve,
            sourceBuilder: { [self] inner in
                try buildSource(
                    inner.spec, inner.parameters, inner.location, key: "", sides: [:], meterKey: meterKey, clock: clock)
            },
            chainBuilder: { [self] chain, prefix, placement in
                try buildChain(
                    chain, meterKey: meterKey, keyPrefix: prefix, clock: clock, placement: placement, services: scope)
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
                for: component, key: key, sides: [:], meterKey: meterKey, group: keyPrefix.isEmpty ? nil : keyPrefix,
                clock: clock, services: chainServices ?? scope)
            guard let placement else { return try factory(component.parameters, operatorContext) }
            operatorContext.handedOn = handOn
            operatorContext.stateProbe = placement.stateProbe
            let apply = try factory(component.parameters, operatorContext)
            if let after = operatorContext.clockAfter { clock = after }
            handOn = operatorContext.handOn
            return apply
        }
        return { source in operators.reduce(source) { stream, apply in apply(stream) } }
    }

    /// A source (a stream's, or one an operator builds inside itself) with its context.
    func buildSource(
        _ spec: ComponentSpec, _ parameters: ParameterValues, _ location: SourceLocation, key: String,
        sides: [String: PublishSubject<Value>], meterKey: String? = nil, clock: (any SchedulerType)? = nil
    ) throws -> PipelineSource {
        guard case .source(let factory) = spec.factory else { preconditionFailure("validated as a source") }
        let component = ValidatedComponent(
            use: ComponentUse(name: spec.name, location: location, parameters: nil, id: nil), spec: spec,
            parameters: parameters)
        return try factory(
            parameters, context(for: component, key: key, sides: sides, meterKey: meterKey, clock: clock))
    }
}
