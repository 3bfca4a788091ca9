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
            let ops = parameters[Key.ops]
            let chain = try context.build(ops)
            let maxGroups = parameters[Key.maxGroups]
            let idle = parameters[Key.idle]
            let scheduler = context.scheduler
            // Under --state each group's chain is built for it, so its operators checkpoint on
            // their own keys (`main#1 groupBy [3] ops#0 scan`); the checkpoints forget them when
            // the group's chain completes.
            let checkpoints = context.checkpoints
            let keyed = checkpoints.map { checkpoints in
                KeyedChains(
                    build: { slot in try context.build(ops, checkpointedAs: "\(context.checkpointKey) [\(slot)]") },
                    forget: { [weak checkpoints] slot in
                        checkpoints?.forget(group: "\(context.checkpointKey) [\(slot)]")
                    })
            }
            let state = context.operatorState()
            return { [weak state] source in
                Observable { observer, lifetime in
                    let groups = BoundedGroups(
                        chain: chain, keyed: keyed, state: state, maxGroups: maxGroups, idle: idle,
                        scheduler: scheduler, observer: observer, lifetime: lifetime)
                    let scope = context.makeScope()
                    source.subscribe(
                        AnyObserver { event in
                            switch event {
                            case .next(let element):
                                do {
                                    guard
                                        let groupKey = try context.handling(
                                            element, { try context.evaluate(key, element, in: scope) })
                                    else { return }
                                    groups.send(element, key: groupKey)
                                } catch {
                                    groups.end(.error(error))
                                }
                            case .error, .completed:
                                groups.end(event)
                            }
                        }, in: lifetime.makeChild())
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
}

/// The open groups of one `groupBy` subscription: each a subject feeding its own chain, closed when
/// idle or when there are too many, the chains' outputs merged into one stream.
final class BoundedGroups {
    private final class Group {
        let subject = PublishSubject<Value>()
        let timer = SerialDisposable()
        /// Its number in this subscription (and in the checkpoints, under `--state`).
        let slot: Int
        var lastElement: RxTime
        /// The stamp of its latest entry in `recency`.
        var stamp = 0

        init(slot: Int, lastElement: RxTime) {
            self.slot = slot
            self.lastElement = lastElement
        }
    }

    private let chains: MergedChains
    private let keyed: KeyedChains?
    private var nextSlot = 0
    private let maxGroups: Int
    private let idle: RxTimeInterval?
    private let scheduler: any SchedulerType
    private let lifetime: Lifetime
    private var groups: [Value: Group] = [:]
    /// Keys by their latest element, oldest first; an entry whose stamp is no longer its group's is
    /// stale. The least recently used group is found from the front in amortized constant time
    /// (a scan of every group per new key made 200,000 keys take minutes).
    private var recency: [(key: Value, stamp: Int)] = []
    private var head = 0
    private var stamp = 0
    private var sourceEnded = false

    init(
        chain: @escaping PipelineOperator, keyed: KeyedChains? = nil, state: OperatorState<Value>? = nil,
        maxGroups: Int, idle: RxTimeInterval?, scheduler: any SchedulerType, observer: AnyObserver<Value>,
        lifetime: Lifetime
    ) {
        self.chains = MergedChains(chain: chain, observer: observer, lifetime: lifetime)
        self.keyed = keyed
        self.maxGroups = maxGroups
        self.idle = idle
        self.scheduler = scheduler
        self.lifetime = lifetime
        if let state, keyed != nil {
            if let restored = state.takeRestored() { restore(restored) }
            // Registered before the groups are let go of below, so the last checkpoint reads them.
            state.keep({ [unowned self] in saved() }, origins: { [] }, until: lifetime)
        }
        // Idle timers are not added to the lifetime one by one (groups come and go for ever).
        lifetime.onDispose { [self] in
            for group in groups.values { group.timer.dispose() }
            groups.removeAll()
        }
    }

    func send(_ element: Value, key: Value) {
        if lifetime.isDisposed || sourceEnded { return }
        guard let group = groups[key] ?? open(key) else { return }
        group.lastElement = scheduler.now
        touch(key, group)
        group.subject.on(.next(element))
        compact()
    }

    /// Makes `group` the most recently used.
    private func touch(_ key: Value, _ group: Group) {
        stamp += 1
        group.stamp = stamp
        recency.append((key, stamp))
    }

    /// The open groups, least recently used first: each one's number, key and how long it has
    /// been quiet (its chain's state is kept under its number, by its operators).
    func saved() -> Value {
        var list: [Value] = []
        for (key, entryStamp) in recency[head...] {
            guard let group = groups[key], group.stamp == entryStamp else { continue }
            list.append(
                Value(stateRecord: [
                    ("slot", .int(group.slot)), ("key", key),
                    ("quiet", Value(stateDuration: scheduler.now - group.lastElement)),
                ]))
        }
        return .array(list)
    }

    /// Opens again the groups a checkpoint kept, in the order it kept them; their chains take
    /// back their operators' state as they are built.
    func restore(_ saved: Value) {
        for entry in saved.arrayValue ?? [] {
            guard let slot = entry["slot"]?.intValue, let key = entry["key"] else { continue }
            let quiet = entry["quiet"]?.stateDuration ?? .zero
            guard let group = open(key, slot: slot, quiet: quiet) else { return }
            touch(key, group)
        }
    }

    func end(_ event: Event<Value>) {
        if lifetime.isDisposed || sourceEnded { return }
        sourceEnded = true
        if case .error = event {
            for group in groups.values { group.subject.on(event) }
            groups.removeAll()
            chains.finish(event)
            return
        }
        // Least recently used first, so the output's order does not depend on hashing.
        while let key = leastRecentlyUsed() { close(key) }
        chains.completeWhenDone()
    }

    /// Opens the group of `key`, numbered `slot` (a new number unless restored), quiet for
    /// `quiet` already; nil when its chain cannot be built (the result has failed).
    private func open(_ key: Value, slot: Int? = nil, quiet: RxTimeInterval = .zero) -> Group? {
        if groups.count >= maxGroups, let oldest = leastRecentlyUsed() { close(oldest) }
        let slot = slot ?? nextSlot
        nextSlot = max(nextSlot, slot + 1)
        let group = Group(slot: slot, lastElement: scheduler.now - quiet)
        var chain: PipelineOperator?
        if let keyed {
            do {
                chain = try keyed.build(slot)
            } catch {
                end(.error(error))
                return nil
            }
        }
        groups[key] = group
        armIdle(key, group, after: idle.map { max(.zero, $0 - quiet) })
        chains.run(group.subject.asObservable(), through: chain) { [keyed] in keyed?.forget(slot) }
        return group
    }

    /// The key of the open group whose latest element is the oldest.
    private func leastRecentlyUsed() -> Value? {
        while head < recency.count {
            let (key, entryStamp) = recency[head]
            head += 1
            if groups[key]?.stamp == entryStamp { return key }
        }
        return nil
    }

    /// Drops the stale front of `recency` once it is half of it, so it stays bounded.
    private func compact() {
        if head > 1024 && head * 2 > recency.count {
            recency.removeFirst(head)
            head = 0
        }
    }

    /// Closes the group once `idle` has passed since its latest element; the timer is set once
    /// per quiet period, not once per element.
    private func armIdle(_ key: Value, _ group: Group, after delay: RxTimeInterval?) {
        guard let idle, let delay else { return }
        group.timer.disposable = scheduler.schedule(after: delay) { [weak self, weak group] in
            guard let self, let group, self.groups[key] === group else { return }
            let quiet = self.scheduler.now - group.lastElement
            if quiet >= idle {
                self.close(key)
            } else {
                self.armIdle(key, group, after: idle - quiet)
            }
        }
    }

    private func close(_ key: Value) {
        guard let group = groups.removeValue(forKey: key) else { return }
        group.timer.dispose()
        group.subject.on(.completed)
    }
}
