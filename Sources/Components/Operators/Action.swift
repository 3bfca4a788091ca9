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
            let gate = parameters[Key.enabledIf].map { context.stream($0.name).map(\.isTruthy) }
            let state = context.operatorState()
            return { [weak state] inputs in
                inputs.exclusiveWork(gate: gate) {
                    ActionRules(work: work, context: context, hasCondition: gate != nil, state: state)
                }
            }
        })
}

/// `action`'s rules over the runtime's `exclusiveWork` (one piece of work at a time): the side
/// streams it feeds, the refusals it reports, and the element whose work runs, for checkpoints.
final class ActionRules: ExclusiveWorkRules {
    private let work: PipelineSource
    private let context: ComponentContext
    private weak var state: OperatorState<Value>?
    private var executing = false
    /// The element whose work runs, and its message, for checkpoints.
    private var current: (input: Value, origin: Origin?)?
    /// The latest value of enabledIf (true when there is none).
    private var condition: Bool

    init(work: PipelineSource, context: ComponentContext, hasCondition: Bool, state: OperatorState<Value>?) {
        self.work = work
        self.context = context
        self.condition = !hasCondition
        self.state = state
    }

    private var isEnabled: Bool { !executing && condition }

    private func publish(_ side: String, _ value: Value) {
        context.sideStreams[side]?.onNext(value)
    }

    func subscribed(in lifetime: Lifetime) -> Value? {
        // The work a checkpoint kept runs again first, as the work in progress.
        let restored = state?.takeRestored()?.arrayValue?.first
        state?.keep(
            { .array(self.current.map { [$0.input] } ?? []) }, origins: { self.current?.origin.map { [$0] } ?? [] },
            until: lifetime)
        publish("executing", .bool(false))
        publish("enabled", .bool(false))
        if condition { publish("enabled", .bool(isEnabled)) }
        return restored
    }

    func gateChanged(open: Bool) {
        condition = open
        publish("enabled", .bool(isEnabled))
    }

    func refused(_ input: Value) {
        publish("errors", Self.refusal(input, context: context))
    }

    func work(for input: Value, running: Lifetime) -> Observable<Value> {
        current = (input, Origin.current)
        executing = true
        publish("executing", .bool(true))
        publish("enabled", .bool(false))
        return work.make(input).do(afterNext: { [context] value in context.sideStreams["elements"]?.onNext(value) })
    }

    func failed(_ error: any Error, input: Value) -> (any Error)? {
        publish("errors", InnerWork.describe(error, context: context, element: input, kind: "underlyingError"))
        return nil
    }

    func ended() {
        current = nil
        executing = false
        publish("executing", .bool(false))
        publish("enabled", .bool(isEnabled))
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
