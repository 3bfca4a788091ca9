@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let key = Parameter<Expression>(
        "key", doc: "The key of an element's group.", example: ".user")
    static let ops = Parameter<ParameterValues.OperatorChain>(
        "ops", doc: "The operators each group's elements go through, as a stream's ops.",
        example: "[{ window: 1h }, { map: len(.) }]")
    static let maxGroups = Parameter<Int>(
        "maxGroups", default: 10_000, doc: "The most groups open at once; past it, the one idle longest is closed."
    ).atLeast(1)
    static let idle = Parameter<RxTimeInterval?>(
        "idle", doc: "Close a group after this long without an element.", example: "5m"
    ).atLeast(RxTimeInterval.clockResolution)
}

extension BuiltinComponents {
    /// `groupBy: {key: EXPR, ops: [...], maxGroups: N, idle: 5m}` — a sub-chain per key, outputs merged.
    public static let groupBy = ComponentSpec(
        name: "groupBy",
        summary: "Runs its own chain of operators for each key's elements, and merges what they emit.",
        docs: """
            A group opens at the first element of its key and runs ops (written as a stream's ops) on \
            that key's elements; the outputs of all groups are merged. Closing a group completes its \
            chain, so a window or reduce in it emits what it holds. Memory stays bounded on unbounded \
            keys: past maxGroups open groups the one idle longest is closed, and with idle a group with \
            no element for that long is closed; a later element of its key opens a new group. When the \
            stream completes every group is closed and the result completes once every chain has; an \
            error reaches every group and the result. (RxSwift's groupBy, with its groups bounded.)
            """,
        parameters: [Key.key, Key.ops, Key.maxGroups, Key.idle],
        example: """
            - groupBy:
                key: .user
                ops: [{ window: 1m }, { map: "{user: .[0].user, events: len(.)}" }]
                idle: 10m
            """,
        checkpointing: .ofInnerChain(
            Key.ops, keeping: "its open groups and, for each, the state of its ops",
            described: "keeps its open groups and, for each, the state of its ops (each as it keeps its own); "
                + "needs every one of its ops to be checkpointable"),
        elementErrors: true,
        factory: .operator { parameters, context in
            let key = parameters[Key.key]
            let chain = try context.build(parameters[Key.ops])
            let limits = GroupLimits(
                maxGroups: parameters[Key.maxGroups], idle: parameters[Key.idle], scheduler: context.scheduler)
            // Under --state each group's chain is built for it, so its operators checkpoint on
            // their own keys (`main#1 groupBy [3] ops#0 scan`); the checkpoints forget them when
            // the group's chain completes.
            let keyed = context.checkpoints.map { checkpoints in
                KeyedChains(
                    build: { number in
                        try context.build(parameters[Key.ops], checkpointedAs: "\(context.checkpointKey) [\(number)]")
                    },
                    forget: { [weak checkpoints] number in
                        checkpoints?.forget(group: "\(context.checkpointKey) [\(number)]")
                    })
            }
            let state = keyed == nil ? nil : context.operatorState()
            return { [weak state] source in
                Observable.deferred {
                    let scope = context.makeScope()
                    // The key is worked out first, so an element on which it fails is dropped as
                    // onError says; the grouping then reads the key it found.
                    let found = StateBox(Value.null)
                    return source.filter { element in
                        guard
                            let value = try context.handling(element, { try context.evaluate(key, element, in: scope) })
                        else { return false }
                        found.value = value
                        return true
                    }
                    .groupBy(keySelector: { _ in found.value }, limits: limits, state: state)
                    .flatMap { group in try keyed?.run(group) ?? chain(group.asObservable()) }
                }
            }
        }
    ).keepingState(of: [Key.key, Key.ops]).runningOnAnyThread().declaring { traits in
        traits.innerRun = "each group"
        traits.keyed(by: Key.key)
    }
}

/// Under `--state`: how `groupBy` builds each group's chain on checkpoint keys of its own, by the
/// group's number, and lets go of their state when the chain completed.
struct KeyedChains {
    let build: (Int) throws -> PipelineOperator
    let forget: (Int) -> Void

    /// The chain of `group`, built for its number.
    func run(_ group: GroupedObservable<Value, Value>) throws -> Observable<Value> {
        let number = group.number
        return try build(number)(group.asObservable()).do(onCompleted: { forget(number) })
    }
}
