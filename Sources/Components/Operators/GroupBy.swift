@_spi(Host) import Pipeline
import Reactive

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
    ).above(RxTimeInterval.zero)
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
        factory: .operator { parameters, context in
            let key = parameters[Key.key]
            let chain = try context.build(parameters[Key.ops])
            let maxGroups = parameters[Key.maxGroups]
            let idle = parameters[Key.idle]
            let scheduler = context.scheduler
            return { source in
                Observable { observer, lifetime in
                    let groups = BoundedGroups(
                        chain: chain, maxGroups: maxGroups, idle: idle, scheduler: scheduler, observer: observer,
                        lifetime: lifetime)
                    let scope = context.makeScope()
                    source.subscribe(
                        AnyObserver { event in
                            switch event {
                            case .next(let element):
                                do {
                                    groups.send(element, key: try context.evaluate(key, element, in: scope))
                                } catch {
                                    groups.end(.error(error))
                                }
                            case .error, .completed:
                                groups.end(event)
                            }
                        }, in: lifetime.makeChild())
                }
            }
        })
}

/// The open groups of one `groupBy` subscription: each a subject feeding its own chain, closed when
/// idle or when there are too many, the chains' outputs merged into one stream.
final class BoundedGroups {
    private struct Group {
        let subject: PublishSubject<Value>
        var lastElement: RxTime
        var timer: SerialDisposable
    }

    private let chain: PipelineOperator
    private let maxGroups: Int
    private let idle: RxTimeInterval?
    private let scheduler: any SchedulerType
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private var groups: [Value: Group] = [:]
    /// Chains still running, closed groups' included (they may still be emitting).
    private var running = 0
    private var sourceEnded = false

    init(
        chain: @escaping PipelineOperator, maxGroups: Int, idle: RxTimeInterval?, scheduler: any SchedulerType,
        observer: AnyObserver<Value>, lifetime: Lifetime
    ) {
        self.chain = chain
        self.maxGroups = maxGroups
        self.idle = idle
        self.scheduler = scheduler
        self.observer = observer
        self.lifetime = lifetime
        // Idle timers are not added to the lifetime one by one (groups come and go for ever).
        lifetime.onDispose { [self] in
            for group in groups.values { group.timer.dispose() }
            groups.removeAll()
        }
    }

    func send(_ element: Value, key: Value) {
        if lifetime.isDisposed || sourceEnded { return }
        if groups[key] == nil { open(key) }
        groups[key]?.lastElement = scheduler.now
        armIdle(key)
        groups[key]?.subject.on(.next(element))
    }

    func end(_ event: Event<Value>) {
        if lifetime.isDisposed || sourceEnded { return }
        sourceEnded = true
        if case .error(let error) = event {
            for group in groups.values { group.subject.on(.error(error)) }
            groups.removeAll()
            finish(.error(error))
            return
        }
        for key in Array(groups.keys) { close(key) }
        if running == 0 { finish(.completed) }
    }

    private func open(_ key: Value) {
        if groups.count >= maxGroups, let oldest = groups.min(by: { $0.value.lastElement < $1.value.lastElement }) {
            close(oldest.key)
        }
        let subject = PublishSubject<Value>()
        let timer = SerialDisposable()
        groups[key] = Group(subject: subject, lastElement: scheduler.now, timer: timer)
        running += 1
        let chainLifetime = lifetime.makeChild()
        chain(subject.asObservable()).subscribe(
            AnyObserver { [self] event in
                if lifetime.isDisposed { return }
                switch event {
                case .next: observer.on(event)
                case .error(let error): finish(.error(error))
                case .completed:
                    chainLifetime.dispose()
                    running -= 1
                    if sourceEnded && running == 0 { finish(.completed) }
                }
            }, in: chainLifetime)
    }

    private func armIdle(_ key: Value) {
        guard let idle, let group = groups[key] else { return }
        group.timer.disposable = scheduler.schedule(after: idle) { [weak self] in self?.close(key) }
    }

    private func close(_ key: Value) {
        guard let group = groups.removeValue(forKey: key) else { return }
        group.timer.dispose()
        group.subject.on(.completed)
    }

    private func finish(_ event: Event<Value>) {
        if lifetime.isDisposed { return }
        observer.on(event)
        lifetime.dispose()
    }
}
