@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let enabledIf = Parameter<StreamName?>(
        "enabledIf",
        doc:
            "A stream of booleans: the action takes an element only while its latest value is true (and until it has one, none).",
        example: "credentialsValid")
}

extension BuiltinComponents {
    /// `action: {SOURCE}` — the Action library's rule: one piece of work at a time, refusing the rest.
    public static let action = ComponentSpec(
        name: "action",
        summary:
            "Runs its work for an element only when enabled and idle; an element that arrives while the work runs is refused, never queued.",
        docs: """
            The rules of the RxSwift Action library. The action is enabled when it is not executing and \
            the latest value of enabledIf is true (always true without enabledIf). An element that arrives \
            while it is enabled starts the work (the inner source, whose templates see the element as '.'); \
            one that arrives while it is not enabled is refused: {kind: notEnabled, element} goes to \
            NAME.errors and nothing else happens. The work's elements are the action's output (and \
            NAME.elements); its failure goes to NAME.errors as {kind: underlyingError, message, element} \
            and the action is enabled again: an action never fails the pipeline. NAME.executing starts \
            with false and is true while the work runs; NAME.enabled starts with false, then follows \
            !executing && enabledIf. A reader of executing or enabled gets their current value first. \
            The action completes when its input has and no work runs. Compare flatMapLatest, which \
            switches to the newest element, and flatMap, which runs them all.
            """,
        parameters: [InnerWork.source, Key.enabledIf],
        primary: InnerWork.source,
        example: """
            - id: login
              action:
                source: { events: [{ at: 1s, next: "login ok!" }, { at: 1s, complete: true }] }
                enabledIf: credentialsValid
            """,
        sideStreams: ["elements", "executing", "errors", "enabled"],
        checkpointing: .restartsWork(
            "the work running at the checkpoint: its element is kept and the work runs again first when the run "
                + "resumes, so what it had emitted comes again"),
        factory: .operator { parameters, context in
            let work = try context.build(parameters[InnerWork.source])
            let condition = parameters[Key.enabledIf].map { context.stream($0.name) }
            let state = context.operatorState()
            return { [weak state] inputs in
                ActionSink.observable(inputs, work: work, enabledIf: condition, context: context, state: state)
            }
        })
}

/// The state of one `action` subscription, on the pipeline's thread.
final class ActionSink {
    private let work: PipelineSource
    private let context: ComponentContext
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private var executing = false
    /// The element whose work runs, and its message, for checkpoints.
    private var current: (input: Value, origin: Origin?)?
    /// The latest value of enabledIf (true when there is none).
    private var condition: Bool
    private var inputsDone = false

    private init(
        work: PipelineSource, context: ComponentContext, hasCondition: Bool, observer: AnyObserver<Value>,
        lifetime: Lifetime
    ) {
        self.work = work
        self.context = context
        self.condition = !hasCondition
        self.observer = observer
        self.lifetime = lifetime
    }

    static func observable(
        _ inputs: Observable<Value>, work: PipelineSource, enabledIf: Observable<Value>?, context: ComponentContext,
        state: OperatorState<Value>? = nil
    ) -> Observable<Value> {
        Observable { observer, lifetime in
            let sink = ActionSink(
                work: work, context: context, hasCondition: enabledIf != nil, observer: observer, lifetime: lifetime)
            let restored = state?.takeRestored()?.arrayValue?.first
            state?.keep(
                { .array(sink.current.map { [$0.input] } ?? []) },
                origins: { sink.current?.origin.map { [$0] } ?? [] }, until: lifetime)
            sink.publish("executing", .bool(false))
            sink.publish("enabled", .bool(false))
            if let enabledIf {
                enabledIf.subscribe(AnyObserver { sink.onCondition($0) }, in: lifetime.makeChild())
            } else {
                sink.publish("enabled", .bool(sink.isEnabled))
            }
            // The work a checkpoint kept runs again, as the work in progress.
            if let restored { sink.start(restored) }
            // A child lifetime: the inputs ending must not end the work in progress.
            inputs.subscribe(AnyObserver { sink.onInput($0) }, in: lifetime.makeChild())
        }
    }

    private var isEnabled: Bool { !executing && condition }

    private func publish(_ side: String, _ value: Value) {
        context.sideStreams[side]?.onNext(value)
    }

    private func onCondition(_ event: Event<Value>) {
        guard !lifetime.isDisposed else { return }
        switch event {
        case .next(let value):
            condition = value.isTruthy
            publish("enabled", .bool(isEnabled))
        case .error:
            fail(event)
        case .completed:
            break  // the last value stays, as in combineLatest
        }
    }

    private func onInput(_ event: Event<Value>) {
        guard !lifetime.isDisposed else { return }
        switch event {
        case .next(let input):
            guard isEnabled else {
                publish("errors", Self.refusal(input, context: context))
                return
            }
            start(input)
        case .error:
            fail(event)
        case .completed:
            inputsDone = true
            if !executing { finish() }
        }
    }

    private func start(_ input: Value) {
        current = (input, Origin.current)
        executing = true
        publish("executing", .bool(true))
        publish("enabled", .bool(false))
        let running = lifetime.makeChild()
        work.make(input).subscribe(
            AnyObserver { [self] event in
                guard !running.isDisposed else { return }
                switch event {
                case .next(let value):
                    observer.on(.next(value))
                    publish("elements", value)
                case .error(let error):
                    publish(
                        "errors", InnerWork.describe(error, context: context, element: input, kind: "underlyingError"))
                    ended(running)
                case .completed:
                    ended(running)
                }
            }, in: running)
    }

    private func ended(_ running: Lifetime) {
        running.dispose()
        current = nil
        executing = false
        publish("executing", .bool(false))
        publish("enabled", .bool(isEnabled))
        if inputsDone { finish() }
    }

    private func finish() {
        observer.on(.completed)
        lifetime.dispose()
    }

    private func fail(_ event: Event<Value>) {
        observer.on(event)
        lifetime.dispose()
    }

    /// An element refused because the action was busy or disabled, as an element of `errors`.
    static func refusal(_ input: Value, context: ComponentContext) -> Value {
        var report = JSONObject()
        report["kind"] = .string("notEnabled")
        report["message"] = .string("the action is not enabled")
        report["operator"] = .string(context.componentName)
        report["location"] = .string(context.location.description)
        report["element"] = input
        return .object(report)
    }
}
