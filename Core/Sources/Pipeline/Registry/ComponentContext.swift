import Reactive

/// What a component gets while it is built: the pipeline's scheduler and expression environment,
/// where it is in the file, and the streams and side streams it may read or feed.
public final class ComponentContext {
    /// The pipeline's scheduler: every timer and every event of the pipeline runs on it.
    public let scheduler: any SchedulerType
    /// The clock and random numbers expressions read.
    @_spi(Components) public let environment: ExpressionEnvironment
    /// The component's name.
    public let componentName: String
    /// Where the component is in the pipeline file.
    public let location: SourceLocation
    /// The directory of the pipeline file, against which relative paths are resolved.
    @_spi(Components) public let baseDirectory: String
    /// Where the lines `log` writes go (the run's log on standard error, by default).
    let logRecord: (LogRecord) -> Void
    let streamResolver: (String) -> Observable<Value>?
    let sourceBuilder: (ParameterValues.InnerSource) throws -> PipelineSource
    let chainBuilder:
        (ParameterValues.OperatorChain, _ keyPrefix: String, _ placement: ChainPlacement?) throws -> PipelineOperator
    /// The side streams the pipeline reads from this component, by name (`executing`, `errors`).
    public let sideStreams: [String: PublishSubject<Value>]
    /// For a sink, the stream it reads.
    @_spi(Components) public let streamName: String?
    let services: SharedServices
    /// The component's name in checkpoints: its stream and place (`main#2 scan`). Empty for a
    /// source inside another component (`flatMap`'s, `scanPaginate`'s): its owner keeps the state
    /// of the work it starts, and the source itself sees no checkpoints.
    @_spi(Components) public let checkpointKey: String
    /// For a component of one `groupBy` group's chain: the group's key prefix, under which the
    /// checkpoints let go of the chain's state once the group's chain completed.
    let checkpointGroup: String?
    /// Whose meter it counts on in a watched run: its own (its checkpoint key), or for a
    /// component inside another's inner chain or source, its owner's.
    let meterKey: String
    /// What an element it cannot handle does (`onError`); `fail` for components without it.
    @_spi(Components) public let onError: ElementErrorPolicy

    init(
        scheduler: any SchedulerType, environment: ExpressionEnvironment, componentName: String,
        location: SourceLocation, baseDirectory: String, log: @escaping (LogRecord) -> Void,
        streamResolver: @escaping (String) -> Observable<Value>?,
        sourceBuilder: @escaping (ParameterValues.InnerSource) throws -> PipelineSource,
        chainBuilder:
            @escaping (ParameterValues.OperatorChain, _ keyPrefix: String, _ placement: ChainPlacement?)
            throws -> PipelineOperator,
        sideStreams: [String: PublishSubject<Value>], services: SharedServices, streamName: String? = nil,
        checkpointKey: String, checkpointGroup: String? = nil, meterKey: String? = nil,
        onError: ElementErrorPolicy = .fail
    ) {
        self.checkpointGroup = checkpointGroup
        self.meterKey = meterKey ?? checkpointKey
        self.onError = onError
        self.checkpointKey = checkpointKey
        self.services = services
        self.streamName = streamName
        self.scheduler = scheduler
        self.environment = environment
        self.componentName = componentName
        self.location = location
        self.baseDirectory = baseDirectory
        self.logRecord = log
        self.streamResolver = streamResolver
        self.sourceBuilder = sourceBuilder
        self.chainBuilder = chainBuilder
        self.sideStreams = sideStreams
    }

    /// Writes a line to the run's log, marked with this component and its place in the file;
    /// `info` unless told otherwise (`warning` for a fault the component recovers from).
    public func log(_ message: String, level: LogLevel = .info) {
        logRecord(LogRecord(level: level, message: message, component: componentName, location: location))
    }

    /// The pipeline's object of type `T`, if there is one (canned test responses, run settings).
    @_spi(Components) public func existing<T: AnyObject>(_ type: T.Type) -> T? {
        services.existing(type)
    }

    /// The object of type `T` that every component of this pipeline shares (the terminal screen
    /// that `prompt` and `table` draw on, say), made by `make` the first time it is asked for.
    @_spi(Components) public func shared<T: AnyObject>(_ type: T.Type, _ make: () -> T) -> T {
        services.object(type, make)
    }

    /// The clock the operators after this one run on, when this one changes it (`eventTime`
    /// sets its event-time clock here while it is built); nil to keep this component's.
    @_spi(Components) public var clockAfter: (any SchedulerType)?

    /// What this operator offers the operator built right after it in the same stream (`eventTime`
    /// offers an `aggregate` right behind it its elements as they come); set while it is built.
    @_spi(Components) public var handOn: (any OperatorOffer)?

    /// What the operator right before this one in the same stream offered (see `handOn`).
    @_spi(Components) public var handedOn: (any OperatorOffer)?

    /// The offer of kind `kind` the operator right before this one made, if it made one.
    @_spi(Components) public func offered<Offer: OperatorOffer>(_ kind: Offer.Type) -> Offer? { handedOn as? Offer }

    /// Where this operator's state is kept to be measured when the run keeps no checkpoints (an
    /// operator of a watched `partitionBy`'s partition); see `operatorState()`.
    var stateProbe: StateProbe?

    /// Whether a source of the run sets message origins (`ComponentTraits.setsOrigins`): they are
    /// counted on the pipeline's thread only, so nothing may run on other threads.
    @_spi(Components) public var sourcesSetOrigins: Bool { services.existing(RunSources.self)?.setOrigins ?? false }

    /// The runner group's partitions a source of the run reads (`ComponentTraits.groupPartitions`):
    /// after it, `partitionBy` runs the group's partitions.
    @_spi(Components) public var groupPartitions: GroupPartitions? { services.existing(RunSources.self)?.group }

    /// The run's checkpoints, when it keeps state (`rivulet run --state`).
    @_spi(Components) public var checkpoints: Checkpoints? {
        checkpointKey.isEmpty ? nil : services.existing(Checkpoints.self)
    }

    /// What this component held at the checkpoint the run resumes from, if it resumes. It is
    /// handed out once, so read it at subscription: a later subscription starts afresh.
    public var restoredState: Value? {
        checkpoints?.takeRestoredState(checkpointKey)
    }

    /// Registers how to read this component's state when a checkpoint is taken (nothing happens
    /// when the run keeps no state). Called at subscription, it reads the state of that subscription.
    public func keepState(_ read: @escaping () throws -> Value) {
        checkpoints?.register(checkpointKey, read: read, group: checkpointGroup)
    }

    /// Registers how far a source's durable input is done, committed with every checkpoint
    /// (nothing happens when the run keeps no state): `read` is called last, once every
    /// operator's state was read and the messages the checkpoint keeps were told so
    /// (`Origin.checkpointing()`); `committed` once the checkpoint is committed. What `read`
    /// returned comes back as `restoredState` when a run resumes from it.
    @_spi(Components) public func keepPosition(read: @escaping () throws -> Value, committed: @escaping () -> Void) {
        checkpoints?.registerPosition(checkpointKey, read: read, committed: committed)
    }

    /// Lets go of the messages behind what a sink has made durable (rows committed, requests
    /// answered). In a run that keeps state they are settled once the next checkpoint commits
    /// instead: a resumed run redoes the work after its last checkpoint (a window is emitted
    /// again and replaces its row), so until then what the sink wrote may still change.
    public func letGo(_ origins: [Origin]) {
        checkpoints?.settleAtNextCommit(origins)
    }

    /// Where a runtime operator of this component keeps its state for checkpoints (`debounce(_:
    /// scheduler:state:)` and the like), holding what the checkpoint the run resumes from kept;
    /// nil when the run keeps no state, so the operator runs as it does without checkpoints. The
    /// checkpoints own it (it keeps the operator's state readable for the run's last checkpoint):
    /// capture it weakly in the operator, which the pipeline keeps, or the two keep each other.
    public func operatorState() -> OperatorState<Value>? {
        guard let checkpoints else {
            // Kept only to be measured: nothing restores it or stores it.
            guard let stateProbe else { return nil }
            let state = OperatorState<Value>()
            stateProbe.add(state)
            return state
        }
        let state = OperatorState<Value>(restoring: checkpoints.takeRestoredState(checkpointKey))
        checkpoints.register(checkpointKey, state: state, group: checkpointGroup)
        return state
    }

    /// The path of `path` relative to the pipeline file (absolute paths are kept).
    public func resolvePath(_ path: String) -> String {
        Validator.resolve(path, against: baseDirectory)
    }

    /// The stream called `name` (checked to exist before building).
    public func stream(_ name: String) -> Observable<Value> {
        streamResolver(name)
            ?? .error(PipelineRuntimeError("no stream '\(name)'", component: componentName, location: location))
    }

    /// Builds an inner source (the `source` parameter of `flatMapLatest` and the like).
    public func build(_ source: ParameterValues.InnerSource) throws -> PipelineSource {
        try sourceBuilder(source)
    }

    /// Builds an inner chain of operators (the `ops` of `groupBy`): apply it to each group's stream.
    /// Its operators keep no checkpoints of their own (their owner restarts their work).
    public func build(_ chain: ParameterValues.OperatorChain) throws -> PipelineOperator {
        try chainBuilder(chain, "", nil)
    }

    /// Builds an inner chain whose operators keep checkpoints of their own, under keys that
    /// start with `keyPrefix` (one `groupBy` group's chain): `Checkpoints.forget(group:)` with
    /// the same prefix lets go of them. Without checkpoints it is `build(_:)`.
    @_spi(Components) public func build(_ chain: ParameterValues.OperatorChain, checkpointedAs keyPrefix: String) throws
        -> PipelineOperator
    {
        try chainBuilder(chain, checkpoints == nil ? "" : keyPrefix, nil)
    }

    /// Builds an inner chain that runs elsewhere than its owner (one partition of `partitionBy`):
    /// on `placement`'s clock, finding `placement`'s services first, its first operator handed
    /// `placement.handedOn`; checkpointed under `keyPrefix` when the run keeps checkpoints.
    @_spi(Host) public func build(
        _ chain: ParameterValues.OperatorChain, checkpointedAs keyPrefix: String, placement: ChainPlacement
    ) throws -> PipelineOperator {
        try chainBuilder(chain, checkpoints == nil ? "" : keyPrefix, placement)
    }

    /// A new evaluation scope over the pipeline's environment, for one subscription.
    public func makeScope() -> EvaluationScope {
        EvaluationScope(environment: environment)
    }

    /// An error of this component, on `element`.
    public func error(_ message: String, element: Value? = nil) -> PipelineRuntimeError {
        PipelineRuntimeError(message, component: componentName, location: location, element: element)
    }

    /// Handles `error`, met on one element, as `onError` says: `fail` throws it; `skip` counts it
    /// and returns; `errors` reports it on `NAME.errors` and returns. Returning means: drop the
    /// element and go on. `element` is what the report shows (the raw text of a line that could
    /// not be read, say).
    public func elementFailed(_ error: any Error, element: Value?) throws {
        let message = (error as? PipelineRuntimeError)?.message ?? "\(error)"
        switch onError {
        case .fail:
            Origin.current?.fail(error)
            throw error
        case .skip:
            // A message from a durable source goes back rather than being acknowledged.
            Origin.current?.fail(error)
            meter?.count("elements_dropped_total")
            services.object(SkippedElements.self) { SkippedElements() }.add(
                component: componentName, location: location, message: message)
        case .errors:
            sideStreams["errors"]?.onNext(
                ElementErrors.report(
                    message: message, element: element, component: componentName, location: location,
                    at: environment.clock()))
        }
    }

    /// `body`'s result on `element`, or nil when it failed and `onError` dropped the element.
    @inlinable
    public func handling<T>(_ element: Value, _ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch {
            try elementFailed(error, element: element)
            return nil
        }
    }

    /// Evaluates `expression` on `element`, turning an expression error into a pipeline error
    /// that names this component, its place in the file and the element.
    @inlinable
    public func evaluate(_ expression: Expression, _ element: Value, in scope: EvaluationScope) throws -> Value {
        try evaluate(expression, taking: copy element, in: scope)
    }

    /// `evaluate` for an element-wise step that owns its element: the element is moved into the
    /// scope and let go of after, with no copy.
    @inlinable
    public func evaluate(_ expression: Expression, taking element: consuming Value, in scope: EvaluationScope) throws
        -> Value
    {
        scope.element = consume element
        // Let go of the element after: a reader reuses the object of a line nobody holds.
        defer { scope.element = .null }
        do {
            return try expression.evaluate(in: scope)
        } catch let error as ExpressionRuntimeError {
            throw self.error("\(error.message) in '\(expression.source)'", element: scope.element)
        }
    }

    /// Whether `expression` holds for `element`, which is handed back (moved into the scope and
    /// out again, with no copy): a filter's test.
    @inlinable
    public func test(_ expression: Expression, _ element: consuming Value, in scope: EvaluationScope) throws -> (
        holds: Bool, element: Value
    ) {
        scope.element = consume element
        let holds: Bool
        do {
            holds = try expression.evaluate(in: scope).isTruthy
        } catch let error as ExpressionRuntimeError {
            let failed = scope.takeElement()
            throw self.error("\(error.message) in '\(expression.source)'", element: failed)
        }
        return (holds, scope.takeElement())
    }

    /// Renders `template` on `element`; a failure is a pipeline error naming this component, its
    /// place in the file and the element.
    public func render(_ template: Template, _ element: Value, in scope: EvaluationScope) throws -> Value {
        scope.element = element
        do {
            return try template.render(in: scope)
        } catch {
            throw self.error("\(error) in '\(template.source)'", element: element)
        }
    }
}

/// Objects shared by the components of one pipeline, one per type.
final class SharedServices {
    private var objects: [ObjectIdentifier: AnyObject] = [:]
    /// The run's services, under those of one place (a partition's event-time domain).
    private let parent: SharedServices?

    init(parent: SharedServices? = nil) {
        self.parent = parent
    }

    func existing<T: AnyObject>(_ type: T.Type) -> T? {
        objects[ObjectIdentifier(type)] as? T ?? parent?.existing(type)
    }

    /// Puts `object` in as the service of its own type.
    func insert(_ object: AnyObject) {
        objects[ObjectIdentifier(type(of: object))] = object
    }

    func object<T: AnyObject>(_ type: T.Type, _ make: () -> T) -> T {
        if let existing = objects[ObjectIdentifier(type)] as? T { return existing }
        if let parent { return parent.object(type, make) }
        let made = make()
        objects[ObjectIdentifier(type)] = made
        return made
    }
}

/// Where an inner chain runs when not on its owner's clock (one partition of `partitionBy`).
@_spi(Host) public struct ChainPlacement {
    /// The clock its operators run on.
    public var clock: any SchedulerType
    /// Objects its operators find (by type) before the run's.
    public var services: [AnyObject]
    /// What its first operator is offered, as if the operator before it had offered it.
    public var handedOn: (any OperatorOffer)?
    /// Where its operators keep their state to be measured when the run keeps no checkpoints.
    public var stateProbe: StateProbe?

    /// A placement on `clock`.
    public init(
        clock: any SchedulerType, services: [AnyObject] = [], handedOn: (any OperatorOffer)? = nil,
        stateProbe: StateProbe? = nil
    ) {
        self.clock = clock
        self.services = services
        self.handedOn = handedOn
        self.stateProbe = stateProbe
    }
}

/// The states of one chain's operators, kept to be measured (a watched `partitionBy`'s partition
/// shows the bytes of its state) when the run keeps no checkpoints: each operator of the chain
/// asks `operatorState()` as it does under `--state`, and gets a state that only this reads.
/// Only the chain's own operators: one built inside them (a `groupBy`'s per group) keeps none.
@_spi(Host) public final class StateProbe {
    private var states: [OperatorState<Value>] = []

    /// No states yet.
    public init() {}

    func add(_ state: OperatorState<Value>) { states.append(state) }

    /// The bytes of the states now, as JSON, as a checkpoint would store them: read on the thread
    /// the chain runs on. A state its operator never keeps (a `groupBy`, whose groups' chains
    /// keep theirs only under `--state`) counts 0.
    public func measure() -> Int {
        var bytes: [UInt8] = []
        var total = 0
        for state in states {
            guard let value = state.read() else { continue }
            bytes.removeAll(keepingCapacity: true)
            JSONSerializer.write(value, to: &bytes)
            total += bytes.count
        }
        return total
    }
}

/// What the run's stream sources declare that the components after them read: whether one sets
/// message origins, and the group partitions one reads. Worked out by the compiler before
/// anything is built.
final class RunSources {
    let setOrigins: Bool
    let group: GroupPartitions?

    init(_ pipeline: ValidatedPipeline) {
        let sources = pipeline.streams.compactMap { stream -> ValidatedComponent? in
            guard case .component(let source) = stream.origin else { return nil }
            return source
        }
        // An operator's inner source (a `flatMap` of `nats`) sets origins too, though it is built
        // only once the run goes on, after everything that must know.
        let inner = pipeline.streams.flatMap { $0.operators.flatMap { Self.innerSources(in: $0.parameters) } }
        setOrigins =
            sources.contains { $0.spec.traits.setsOrigins($0.parameters) }
            || inner.contains { $0.spec.traits.setsOrigins($0.parameters) }
        group = sources.lazy.compactMap { $0.spec.traits.groupPartitions($0.parameters) }.first
    }

    /// The inner sources among `parameters`' values, those of inner chains' operators included.
    static func innerSources(in parameters: ParameterValues) -> [ParameterValues.InnerSource] {
        parameters.values.values.flatMap { value -> [ParameterValues.InnerSource] in
            switch value {
            case let source as ParameterValues.InnerSource: return [source]
            case let chain as ParameterValues.OperatorChain:
                return chain.operators.flatMap { innerSources(in: $0.parameters) }
            default: return []
            }
        }
    }
}
