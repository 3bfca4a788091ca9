@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// What `flatMap`, `flatMapLatest` and `concatMap` share: running an inner source per element,
/// reporting on the `executing` side stream whether any inner runs, reporting every inner's
/// failure on the `errors` side stream, and, unless `onError: fail`, going on after one.
final class InnerWork {
    private let source: PipelineSource
    private let context: ComponentContext
    private let skipErrors: Bool
    /// Whether a failed inner sends its element's message back (fail, skip) rather than counting
    /// it handled once its report is written (errors).
    private let failsOrigin: Bool
    /// What each of an inner's elements becomes, from `.value` (the element that started the
    /// inner) and `.result` (what the inner emitted); nil: the result as it is.
    private let combine: Expression?
    private var active = 0

    init(parameters: ParameterValues, context: ComponentContext) throws {
        self.source = try context.build(parameters[Self.source])
        self.combine = parameters[Self.combine]
        self.context = context
        self.skipErrors = parameters[Self.onError] != .fail
        self.failsOrigin = parameters[Self.onError] != .errors
    }

    /// The inner observable for `element`, instrumented. It counts as running from the moment the
    /// operator asks for it, so when flatMapLatest switches (new inner made, old one released,
    /// new one subscribed) `executing` does not flicker to false.
    func inner(for element: Value, tracking running: RunningInners? = nil) -> Observable<Value> {
        let context = self.context
        let skipErrors = self.skipErrors
        let failsOrigin = self.failsOrigin
        changeActive(by: 1)
        let number = running?.add(element, origin: Origin.current)
        var results = source.make(element)
        if let combine {
            let scope = context.makeScope()
            results = results.map { result in
                try context.evaluate(combine, ["value": element, "result": result], in: scope)
            }
        }
        return
            results
            .do(onDispose: { [weak self, weak running] in
                self?.changeActive(by: -1)
                if let number { running?.ended(number) }
            })
            .catch { error -> Observable<Value> in
                let report = Self.describe(error, context: context, element: element)
                if failsOrigin { Origin.current?.fail(error) }
                if skipErrors {
                    context.sideStreams["errors"]?.onNext(report)
                    // skip (not errors): counted, as every component's skipped elements are.
                    if failsOrigin { context.skipped(error) }
                    return .empty()
                }
                context.sideStreams["errors"]?.onNext(report)
                return .error(error)
            }
    }

    /// `operate` (the runtime's flatMap, flatMapLatest or concatMap) over `source` with this
    /// work's inners. With `state` (under --state) a checkpoint keeps the elements whose inners
    /// are running or waiting, and a resumed run runs them again first: at-least-once for what
    /// those inners had emitted.
    func apply(
        to source: Observable<Value>, state: OperatorState<Value>?,
        _ operate: @escaping (Observable<Value>, @escaping (Value) -> Observable<Value>) -> Observable<Value>
    ) -> Observable<Value> {
        guard state != nil else { return operate(source) { self.inner(for: $0) } }
        return Observable { [weak state] observer, lifetime in
            let running = RunningInners()
            // First, so the inners a stop disposes of stay in the last checkpoint.
            lifetime.onDispose { running.isStopped = true }
            var input = source
            if let state {
                if let restored = state.takeRestored()?.arrayValue, !restored.isEmpty {
                    input = Observable.concat([Observable.from(restored), source])
                }
                state.keep({ .array(running.elements) }, origins: { running.origins }, until: lifetime)
            }
            operate(input) { self.inner(for: $0, tracking: running) }.subscribe(observer, in: lifetime)
        }
    }

    private func changeActive(by delta: Int) {
        let wasActive = active > 0
        active += delta
        if wasActive != (active > 0) { context.sideStreams["executing"]?.onNext(.bool(active > 0)) }
    }

    /// An error as an element of the `errors` side stream (with `kind` when the operator names its
    /// errors): the shape every component's `errors` stream has.
    static func describe(_ error: any Error, context: ComponentContext, element: Value, kind: String? = nil) -> Value {
        let report = ElementErrors.report(
            message: (error as? PipelineRuntimeError)?.message ?? "\(error)", element: element,
            component: context.componentName, location: context.location, at: context.environment.clock())
        guard let kind, case .object(var fields) = report else { return report }
        fields["kind"] = .string(kind)
        return .object(fields)
    }

    /// The inner source.
    static let source = Parameter<ParameterValues.InnerSource>(
        "source", doc: "The inner source run for each element; its templates see the element as '.'.",
        example: "{ events: { timeline: \"{{ .events }}\" } }")
    /// What an inner's error does.
    static let onError = Parameter<ElementErrorPolicy>(
        "onError", default: .fail,
        doc:
            "fail: an inner error fails the pipeline. skip or errors: the operator goes on. Either way the failure is reported on NAME.errors."
    )

    /// What to emit for each result of an inner (an enrichment that keeps its element).
    static let combine = Parameter<Expression?>.valueExpression(
        "combine",
        doc:
            "What to emit for each element an inner emits, from .value (the element that started it) and .result (what it emitted); an error in it is the inner's failure. Default: the result.",
        example: "\"{order: .value, customer: .result}\"")

    /// The parameters every inner-work operator takes besides its own.
    static let parameters: [any ParameterDeclaration] = [source, onError]

    /// The side streams they offer.
    static let sideStreams = ["executing", "errors"]

    /// What their checkpoints keep: the elements whose inners are running (or, `waiting`,
    /// waiting too), run again first when the run resumes.
    static func checkpointing(waiting: Bool) -> Checkpointing {
        .restartsWork(
            "the inners running \(waiting ? "or waiting " : "")at the checkpoint: their elements are kept, and run "
                + "again first when the run resumes, so what they had emitted comes again")
    }
}

/// The elements whose inners one subscription of an inner-work operator is running or holds
/// waiting, in the order they came, for checkpoints. A stop keeps them; an inner that ended (or
/// that flatMapLatest dropped) is forgotten.
final class RunningInners {
    private var running: [Int: (element: Value, origin: Origin?)] = [:]
    private var next = 0
    /// Set when the operator's subscription is disposed of: its inners then stay.
    var isStopped = false

    func add(_ element: Value, origin: Origin?) -> Int {
        running[next] = (element, origin)
        next += 1
        return next - 1
    }

    func ended(_ number: Int) {
        if !isStopped { running[number] = nil }
    }

    var elements: [Value] { running.sorted { $0.key < $1.key }.map(\.value.element) }
    var origins: [Origin] { running.values.compactMap(\.origin) }
}
