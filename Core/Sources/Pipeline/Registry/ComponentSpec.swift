import Reactive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether a component produces, transforms or consumes a stream.
public enum ComponentKind: String, Sendable, CaseIterable {
    /// Produces elements (`events`, `fixture`, `http`, ...).
    case source
    /// Transforms a stream (`filter`, `debounce`, ...).
    case `operator`
    /// Consumes a stream (`stdout`, `file`, `table`).
    case sink
}

/// A source, built: given the element that triggers it (null at the top of a stream, the outer
/// element inside `flatMapLatest`), the observable of what it emits.
public struct PipelineSource {
    /// Makes the observable for one triggering element.
    public let make: (Value) -> Observable<Value>
    /// For sources that fetch pages (the HTTP sources): a reader that fetches one page at a time,
    /// when asked, for `scanPaginate`.
    public let pages: ((Value) -> any PageReader)?

    /// A source from a function of the triggering element.
    public init(_ make: @escaping (Value) -> Observable<Value>) {
        self.make = make
        self.pages = nil
    }

    /// A paged source: `make` for every page in a row, `pages` to read one page at a time.
    public init(_ make: @escaping (Value) -> Observable<Value>, pages: @escaping (Value) -> any PageReader) {
        self.make = make
        self.pages = pages
    }
}

/// Reads a paged source one page at a time.
public protocol PageReader: AnyObject {
    /// Whether the last page has been fetched.
    var isFinished: Bool { get }
    /// Fetches the next page: emits its items as one array, then completes.
    func nextPage() -> Observable<Value>
}

/// An operator, built: a function from the stream it reads to the stream it emits.
public typealias PipelineOperator = (Observable<Value>) -> Observable<Value>

/// A sink, built: it receives a stream's events and is closed when the pipeline ends or stops.
public protocol PipelineSink: AnyObject {
    /// Receives one event of the stream.
    func receive(_ event: Event<Value>)
    /// Flushes and releases what the sink holds; called once, also after a signal.
    func close()
}

/// How a component is built from its checked parameters.
public enum ComponentFactory {
    /// Builds a source.
    case source((ParameterValues, ComponentContext) throws -> PipelineSource)
    /// Builds an operator.
    case `operator`((ParameterValues, ComponentContext) throws -> PipelineOperator)
    /// Builds a sink.
    case sink((ParameterValues, ComponentContext) throws -> any PipelineSink)

    /// The kind of component it builds.
    public var kind: ComponentKind {
        switch self {
        case .source: return .source
        case .operator: return .operator
        case .sink: return .sink
        }
    }
}

/// Everything a component declares about itself, beside the code that builds it: its name,
/// parameters, docs, an example, the side streams it offers, and the checks its values must pass.
public struct ComponentSpec {
    /// The name used in pipeline files (`debounce`, `nyt.search`).
    public var name: String
    /// One line saying what it does.
    public var summary: String
    /// More about it: semantics, edge cases, what it does on errors.
    public var docs: String
    /// Its parameters.
    public var parameters: [ParameterSpec]
    /// The parameter a short form sets: `debounce: 500ms` sets `dueTime`.
    public var primary: String?
    /// An example of its use, as it would appear in a pipeline file.
    public var example: String
    /// The side streams it exposes, such as `executing` and `errors`.
    public var sideStreams: [String]
    /// How to build it.
    public var factory: ComponentFactory
    /// The checks of its values beyond their types (across parameters, files that must exist,
    /// URLs that must be absolute), run by `lint`, `test` and `run` alike before anything is
    /// built, so a factory never fails on configuration.
    public var validate: ((ParameterValues, ComponentValidation) -> Void)?

    /// A component.
    public init(
        name: String, summary: String, docs: String = "", parameters: [any ParameterDeclaration] = [],
        primary: (any ParameterDeclaration)? = nil, example: String, sideStreams: [String] = [],
        validate: ((ParameterValues, ComponentValidation) -> Void)? = nil, factory: ComponentFactory
    ) {
        self.validate = validate
        self.name = name
        self.summary = summary
        self.docs = docs
        self.parameters = parameters.map(\.spec)
        self.primary = primary?.spec.name
        self.example = example
        self.sideStreams = sideStreams
        self.factory = factory
    }

    /// Whether it is a source, an operator or a sink.
    public var kind: ComponentKind { factory.kind }

    /// The parameter called `name`.
    public func parameter(_ name: String) -> ParameterSpec? {
        parameters.first { $0.name == name }
    }
}

/// Where a component's `validate` step reports problems: each at the value it is about (or at
/// the component when no single value is), with the pipeline's directory for checking paths.
public final class ComponentValidation {
    /// The directory of the pipeline file, against which relative paths are resolved.
    public let baseDirectory: String
    /// Where the component is written.
    public let location: SourceLocation
    let owner: String
    private(set) var diagnostics: [Diagnostic] = []

    init(owner: String, location: SourceLocation, baseDirectory: String) {
        self.owner = owner
        self.location = location
        self.baseDirectory = baseDirectory
    }

    /// Reports a problem at `parameter`'s value in `values` (at the component when not given).
    public func error(
        _ message: String, at parameter: (any ParameterDeclaration)? = nil, in values: ParameterValues,
        note: String? = nil
    ) {
        let place = parameter.flatMap { values.locations[$0.spec.name] } ?? location
        diagnostics.append(.error("\(owner): \(message)", at: place, note: note))
    }

    /// `path` resolved against the pipeline's directory (absolute paths are kept).
    public func resolvePath(_ path: String) -> String {
        Validator.resolve(path, against: baseDirectory)
    }

    /// Whether a file or directory exists at `path` (resolved against the pipeline's directory).
    public func fileExists(_ path: String) -> Bool {
        access(resolvePath(path), F_OK) == 0
    }

    /// Reports an error unless exactly one of the two parameters is given.
    public func requireExactlyOne(
        _ first: any ParameterDeclaration, _ second: any ParameterDeclaration, in values: ParameterValues
    ) {
        switch (values.has(first), values.has(second)) {
        case (false, false): error("give '\(first.spec.name)' or '\(second.spec.name)'", in: values)
        case (true, true):
            error("give '\(first.spec.name)' or '\(second.spec.name)', not both", at: second, in: values)
        default: break
        }
    }
}

/// An error while a pipeline runs, naming the component and where it is in the file.
public struct PipelineRuntimeError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// The component it happened in.
    public var component: String
    /// Where that component is in the pipeline file.
    public var location: SourceLocation
    /// The element being processed, if any.
    public var element: Value?

    /// An error in `component` at `location`.
    public init(_ message: String, component: String, location: SourceLocation, element: Value? = nil) {
        self.message = message
        self.component = component
        self.location = location
        self.element = element
    }

    /// `file:line:col: error: component: message (element: ...)`.
    public var description: String {
        var text = "\(location): error: \(component): \(message)"
        if let element {
            var rendered = element.description
            if rendered.count > 200 { rendered = String(rendered.prefix(197)) + "..." }
            text += " (element: \(rendered))"
        }
        return text
    }
}

/// What a component gets while it is built: the pipeline's scheduler and expression environment,
/// where it is in the file, and the streams and side streams it may read or feed.
public final class ComponentContext {
    /// The pipeline's scheduler: every timer and every event of the pipeline runs on it.
    public let scheduler: any SchedulerType
    /// The clock and random numbers expressions read.
    public let environment: ExpressionEnvironment
    /// The component's name.
    public let componentName: String
    /// Where the component is in the pipeline file.
    public let location: SourceLocation
    /// The directory of the pipeline file, against which relative paths are resolved.
    public let baseDirectory: String
    /// Where `log` and diagnostics of a run are written (standard error by default).
    public let log: (String) -> Void
    let streamResolver: (String) -> Observable<Value>?
    let sourceBuilder: (ParameterValues.InnerSource) throws -> PipelineSource
    /// The side streams the pipeline reads from this component, by name (`executing`, `errors`).
    public let sideStreams: [String: PublishSubject<Value>]
    /// For a sink, the stream it reads.
    public let streamName: String?
    let services: SharedServices

    init(
        scheduler: any SchedulerType, environment: ExpressionEnvironment, componentName: String,
        location: SourceLocation, baseDirectory: String, log: @escaping (String) -> Void,
        streamResolver: @escaping (String) -> Observable<Value>?,
        sourceBuilder: @escaping (ParameterValues.InnerSource) throws -> PipelineSource,
        sideStreams: [String: PublishSubject<Value>], services: SharedServices, streamName: String? = nil
    ) {
        self.services = services
        self.streamName = streamName
        self.scheduler = scheduler
        self.environment = environment
        self.componentName = componentName
        self.location = location
        self.baseDirectory = baseDirectory
        self.log = log
        self.streamResolver = streamResolver
        self.sourceBuilder = sourceBuilder
        self.sideStreams = sideStreams
    }

    /// The pipeline's object of type `T`, if there is one (canned test responses, run settings).
    public func existing<T: AnyObject>(_ type: T.Type) -> T? {
        services.existing(type)
    }

    /// The object of type `T` that every component of this pipeline shares (the terminal screen
    /// that `prompt` and `table` draw on, say), made by `make` the first time it is asked for.
    public func shared<T: AnyObject>(_ type: T.Type, _ make: () -> T) -> T {
        services.object(type, make)
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

    /// A new evaluation scope over the pipeline's environment, for one subscription.
    public func makeScope() -> EvaluationScope {
        EvaluationScope(environment: environment)
    }

    /// An error of this component, on `element`.
    public func error(_ message: String, element: Value? = nil) -> PipelineRuntimeError {
        PipelineRuntimeError(message, component: componentName, location: location, element: element)
    }

    /// Evaluates `expression` on `element`, turning an expression error into a pipeline error
    /// that names this component, its place in the file and the element.
    @inlinable
    public func evaluate(_ expression: Expression, _ element: Value, in scope: EvaluationScope) throws -> Value {
        scope.element = element
        do {
            return try expression.evaluate(in: scope)
        } catch let error as ExpressionRuntimeError {
            throw self.error("\(error.message) in '\(expression.source)'", element: element)
        }
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

// Specs are declared as constants and read while a pipeline is loaded, before anything runs;
// their factories are only called from the thread that builds the pipeline.
extension ComponentSpec: @unchecked Sendable {}

/// Objects shared by the components of one pipeline, one per type.
final class SharedServices {
    private var objects: [ObjectIdentifier: AnyObject] = [:]

    func existing<T: AnyObject>(_ type: T.Type) -> T? {
        objects[ObjectIdentifier(type)] as? T
    }

    /// Puts `object` in as the service of its own type.
    func insert(_ object: AnyObject) {
        objects[ObjectIdentifier(type(of: object))] = object
    }

    func object<T: AnyObject>(_ type: T.Type, _ make: () -> T) -> T {
        if let existing = objects[ObjectIdentifier(type)] as? T { return existing }
        let made = make()
        objects[ObjectIdentifier(type)] = made
        return made
    }
}
