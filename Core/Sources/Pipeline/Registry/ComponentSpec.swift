import Reactive

/// Whether a component produces, transforms or consumes a stream.
@_spi(Components) public enum ComponentKind: String, Sendable, CaseIterable {
    /// Produces elements (`events`, `fixture`, `http`, ...).
    case source
    /// Transforms a stream (`filter`, `debounce`, ...).
    case `operator`
    /// Consumes a stream (`stdout`, `file`, `table`).
    case sink
}

/// How a component is built from its checked parameters.
public enum ComponentFactory {
    /// Builds a source.
    case source((ParameterValues, ComponentContext) throws -> PipelineSource)
    /// Builds an operator.
    case `operator`((ParameterValues, ComponentContext) throws -> PipelineOperator)
    /// Builds an operator that looks at one element at a time, with no timer and nothing kept
    /// between elements (`map`, `filter`): what it returns makes the step of one subscription.
    /// Adjacent ones are fused into one step, so an element crosses the stretch in one call.
    case elementwise((ParameterValues, ComponentContext) throws -> () -> ElementStep)
    /// Builds a sink.
    case sink((ParameterValues, ComponentContext) throws -> any PipelineSink)

    /// The kind of component it builds.
    @_spi(Components) public var kind: ComponentKind {
        switch self {
        case .source: return .source
        case .operator, .elementwise: return .operator
        case .sink: return .sink
        }
    }

    /// How to build it as an operator (an element-wise one as a stretch of one).
    @_spi(Host) public var operatorFactory: ((ParameterValues, ComponentContext) throws -> PipelineOperator)? {
        switch self {
        case .operator(let factory): return factory
        case .elementwise(let factory):
            return { values, context in ElementSteps.fused([.init(try factory(values, context))]) }
        case .source, .sink: return nil
        }
    }
}

/// Which threads a component may run on; the compiler reads it, never the component's values.
@_spi(Components) public enum Threading: Sendable, Equatable {
    /// Only on the pipeline's thread: it does I/O, reads a service the run shares, or counts on
    /// the pipeline's thread (the default of every component that is not element-wise).
    case pipelineThread
    /// On any one thread at a time: it keeps nothing but its own state and uses only the clock it
    /// is given (the default of element-wise ones). An element-wise one may then run on several
    /// threads at once (`parallel:`, a step each), and any such operator inside `partitionBy` on
    /// its partition's thread — while its expressions are pure and it routes no element errors.
    case ownStateOnly
}

/// Everything a component declares about itself, beside the code that builds it: its name,
/// parameters, docs, an example, the side streams it offers, and the checks its values must pass.
public struct ComponentSpec {
    /// The name used in pipeline files (`debounce`, `nyt.search`).
    @_spi(Components) public var name: String
    /// One line saying what it does.
    @_spi(Components) public var summary: String
    /// More about it: semantics, edge cases, what it does on errors.
    @_spi(Components) public var docs: String
    /// Its parameters.
    @_spi(Components) public var parameters: [ParameterSpec]
    /// The parameter a short form sets: `debounce: 500ms` sets `dueTime`.
    @_spi(Components) public var primary: String?
    /// An example of its use, as it would appear in a pipeline file.
    @_spi(Components) public var example: String
    /// The side streams it exposes, such as `executing` and `errors`.
    @_spi(Components) public var sideStreams: [String]
    /// How to build it.
    @_spi(Components) public var factory: ComponentFactory
    /// The checks of its values beyond their types (across parameters, files that must exist,
    /// URLs that must be absolute), run by `lint`, `test` and `run` alike before anything is
    /// built, so a factory never fails on configuration.
    @_spi(Components) public var validate: ((ParameterValues, ComponentValidation) -> Void)?
    /// How it takes part in checkpoints (`rivulet run --state`); unsupported unless it says.
    @_spi(Components) public var checkpointing: Checkpointing
    /// For a source or a sink: its delivery guarantee (at-most-once, at-least-once, exactly-once).
    @_spi(Components) public var delivery: Delivery?
    /// Whether it handles elements one at a time and can fail on one: it then takes `onError`
    /// (`ElementErrors.onError`) and offers the `errors` side stream.
    @_spi(Components) public var routesElementErrors: Bool
    /// Which threads it may run on.
    @_spi(Components) public var threading: Threading
    /// What it declares about how it treats a stream (keyed, holding until completion,
    /// awaiting acknowledgements): what the planner reads instead of its name.
    @_spi(Components) public var traits = ComponentTraits()

    /// A component.
    public init(
        name: String, summary: String, docs: String = "", parameters: [any ParameterDeclaration] = [],
        primary: (any ParameterDeclaration)? = nil, example: String, sideStreams: [String] = [],
        validate: ((ParameterValues, ComponentValidation) -> Void)? = nil,
        checkpointing: Checkpointing = .unsupported("it does not keep its state in checkpoints yet"),
        elementErrors: Bool = false, factory: ComponentFactory
    ) {
        self.init(
            name: name, summary: summary, docs: docs, parameters: parameters, primary: primary, example: example,
            sideStreams: sideStreams, validate: validate, checkpointing: checkpointing, delivery: nil,
            elementErrors: elementErrors, factory: factory)
    }

    /// A source or a sink, with its delivery guarantee.
    @_spi(Components) public init(
        name: String, summary: String, docs: String = "", parameters: [any ParameterDeclaration] = [],
        primary: (any ParameterDeclaration)? = nil, example: String, sideStreams: [String] = [],
        validate: ((ParameterValues, ComponentValidation) -> Void)? = nil,
        checkpointing: Checkpointing = .unsupported("it does not keep its state in checkpoints yet"),
        delivery: Delivery?, elementErrors: Bool = false, factory: ComponentFactory
    ) {
        self.delivery = delivery
        self.routesElementErrors = elementErrors
        self.validate = validate
        self.checkpointing = checkpointing
        self.name = name
        self.summary = summary
        self.docs = docs
        self.parameters = parameters.map(\.spec)
        self.primary = primary?.spec.name
        self.example = example
        self.sideStreams = sideStreams
        if elementErrors {
            if !self.parameters.contains(where: { $0.name == ElementErrors.onError.name }) {
                self.parameters.append(ElementErrors.onError.spec)
            }
            if !self.sideStreams.contains("errors") { self.sideStreams.append("errors") }
        }
        self.factory = factory
        if case .elementwise = factory { threading = .ownStateOnly } else { threading = .pipelineThread }
    }

    /// The parameters its checkpointed state depends on (a window's length, its key): a
    /// checkpoint records their values as written, and a run whose file changed one of them is
    /// refused, since the state no longer means what it did. Others (a filter's expression, a
    /// sink's path) may change between runs.
    @_spi(Components) public var stateParameters: [String] = []

    /// The same component, with the parameters its checkpointed state depends on.
    public func keepingState(of parameters: [any ParameterDeclaration]) -> ComponentSpec {
        var spec = self
        spec.stateParameters = parameters.map(\.spec.name)
        return spec
    }

    /// The same component, declared to keep nothing but its own state (`Threading.ownStateOnly`):
    /// inside `partitionBy`, it runs on its partition's thread.
    public func runningOnAnyThread() -> ComponentSpec {
        var spec = self
        spec.threading = .ownStateOnly
        return spec
    }

    /// Whether it is a source, an operator or a sink.
    @_spi(Components) public var kind: ComponentKind { factory.kind }

    /// The parameter called `name`.
    @_spi(Components) public func parameter(_ name: String) -> ParameterSpec? {
        parameters.first { $0.name == name }
    }
}

// Specs are declared as constants and read while a pipeline is loaded, before anything runs;
// their factories are only called from the thread that builds the pipeline.
extension ComponentSpec: @unchecked Sendable {}
