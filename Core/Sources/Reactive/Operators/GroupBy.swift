/// A group of `groupBy`: its key and the elements that have it.
public struct GroupedObservable<Key, Element>: ObservableType {
    /// The key every element of the group has.
    public let key: Key
    /// The group's number in its subscription: 0 for the first group opened, then counting up
    /// (a group a checkpoint restored keeps the number it had).
    public let number: Int
    let source: Observable<Element>

    /// A group of `key` over `source`, numbered `number`.
    public init(key: Key, number: Int = 0, source: Observable<Element>) {
        self.key = key
        self.number = number
        self.source = source
    }

    /// The group's elements.
    public func asObservable() -> Observable<Element> { source }
}

/// Bounds on the groups `groupBy` keeps open, so memory stays bounded on unbounded keys. Closing a
/// group completes it; a later element of its key opens a new group (with a new number).
@_spi(Components) public struct GroupLimits {
    /// The most groups open at once: past it, the one whose latest element is the oldest closes.
    public var maxGroups: Int?
    /// How long a group stays open without an element.
    public var idle: RxTimeInterval?
    /// The clock `idle` and the groups' quiet times are read on.
    public var scheduler: any SchedulerType

    /// Bounds of at most `maxGroups` open groups, each closed after `idle` without an element.
    public init(maxGroups: Int? = nil, idle: RxTimeInterval? = nil, scheduler: any SchedulerType) {
        self.maxGroups = maxGroups
        self.idle = idle
        self.scheduler = scheduler
    }
}

extension ObservableType {
    /// Splits the elements by `keySelector` into groups, each emitted (as a `GroupedObservable`)
    /// when its first element arrives, just before that element (RxSwift's `groupBy`).
    ///
    /// A group only sends what arrives while it is subscribed. The source's completion or error
    /// goes to every open group first, in the order they opened, then to the result; a throwing
    /// key selector is an error. The source stays subscribed while the result or any group is (a
    /// group subscribed after the result was disposed keeps it going). A group is emitted on
    /// behalf of no element's message: each element carries its own.
    public func groupBy<Key: Hashable>(keySelector: @escaping (Element) throws -> Key) -> Observable<
        GroupedObservable<Key, Element>
    > {
        grouped(keySelector: keySelector, limits: nil) { _ in }
    }

    /// `groupBy(keySelector:)` with its open groups bounded by `limits`: a group is closed (it
    /// completes) when there are more than `maxGroups`, the least recently used first, or after
    /// `idle` without an element. The end reaches the open groups least recently used first.
    @_spi(Components) public func groupBy<Key: Hashable>(
        keySelector: @escaping (Element) throws -> Key, limits: GroupLimits
    ) -> Observable<GroupedObservable<Key, Element>> {
        grouped(keySelector: keySelector, limits: limits) { _ in }
    }

    func grouped<Key: Hashable>(
        keySelector: @escaping (Element) throws -> Key, limits: GroupLimits?,
        subscribed: @escaping (GroupBySink<Key, Element>) -> Void
    ) -> Observable<GroupedObservable<Key, Element>> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = GroupBySink(keySelector: keySelector, limits: limits, downstream: observer, lifetime: lifetime)
            lifetime.onDispose { sink.sourceLifetime.ownerDidEnd() }
            subscribed(sink)
            if sink.isDisposed { return }
            source.subscribe(AnyObserver(sink.on), in: sink.sourceLifetime.lifetime)
        }
    }
}

extension ObservableType {
    /// `groupBy(keySelector:limits:)` that keeps its open groups in `state` for checkpoints: each
    /// one's number, key and how long it has been quiet, least recently used first. Restored, the
    /// groups open again at subscription, in that order, with their numbers, before any element;
    /// what each group's own operators held is theirs to keep (by the group's number).
    @_spi(Components) public func groupBy<Key: Hashable & StateRepresentable>(
        keySelector: @escaping (Element) throws -> Key, limits: GroupLimits, state: OperatorState<Key>?
    ) -> Observable<GroupedObservable<Key, Element>> {
        guard let state else { return groupBy(keySelector: keySelector, limits: limits) }
        return grouped(keySelector: keySelector, limits: limits) { $0.keep(in: state) }
    }
}

/// The sink of `groupBy`: the open groups, each a subject, and (with limits) which was used
/// least recently, found from the front of `recency` in amortized constant time.
final class GroupBySink<Key: Hashable, Element>: Sink<GroupedObservable<Key, Element>> {
    final class Group {
        let subject = PublishSubject<Element>()
        let timer = SerialDisposable()
        let number: Int
        var lastElement: RxTime
        /// The stamp of its latest entry in `recency`.
        var stamp = 0

        init(number: Int, lastElement: RxTime) {
            self.number = number
            self.lastElement = lastElement
        }
    }

    let keySelector: (Element) throws -> Key
    let limits: GroupLimits?
    let sourceLifetime = RefCountLifetime()
    var groups: [Key: Group] = [:]
    /// Keys by when they were last used, oldest first; an entry whose stamp is no longer its
    /// group's is stale. Without limits a group is used only when it opens, so this is the order
    /// the groups opened in.
    var recency: [(key: Key, stamp: Int)] = []
    var head = 0
    var stamp = 0
    var nextNumber = 0
    var ended = false

    init(
        keySelector: @escaping (Element) throws -> Key, limits: GroupLimits?,
        downstream: AnyObserver<GroupedObservable<Key, Element>>, lifetime: Lifetime
    ) {
        self.keySelector = keySelector
        self.limits = limits
        super.init(downstream: downstream, lifetime: lifetime)
        // Idle timers are not added to a lifetime one by one (groups come and go for ever).
        sourceLifetime.lifetime.onDispose { [self] in
            for group in groups.values { group.timer.dispose() }
        }
    }

    var now: RxTime { limits?.scheduler.now ?? .zero }

    func on(_ event: Event<Element>) {
        if ended { return }
        switch event {
        case .next(let element):
            let key: Key
            do {
                key = try keySelector(element)
            } catch {
                end(.error(error))
                return
            }
            if let group = groups[key] {
                if limits != nil {
                    group.lastElement = now
                    touch(key, group)
                }
                group.subject.on(.next(element))
            } else if let group = open(key) {
                group.subject.on(.next(element))
            }
        case .error, .completed:
            end(event)
        }
    }

    /// Opens the group of `key`, numbered `number` (the next number unless restored), quiet for
    /// `quiet` already, and emits it; nil when the result ended meanwhile and nobody can see it.
    func open(_ key: Key, number: Int? = nil, quiet: RxTimeInterval = .zero) -> Group? {
        if let maxGroups = limits?.maxGroups, groups.count >= maxGroups, let oldest = leastRecentlyUsed() {
            close(oldest)
        }
        let number = number ?? nextNumber
        nextNumber = max(nextNumber, number + 1)
        let group = Group(number: number, lastElement: now - quiet)
        groups[key] = group
        touch(key, group)
        if let idle = limits?.idle { armIdle(key, group, idle: idle, after: max(.zero, idle - quiet)) }
        if !isDisposed {
            let refCount = sourceLifetime
            let published = group.subject.asObservable()
            let emitted = GroupedObservable(
                key: key, number: number,
                source: Observable { observer, groupLifetime in
                    refCount.hold(until: groupLifetime)
                    published.subscribe(observer, in: groupLifetime)
                })
            Origin.with(nil) { forward(.next(emitted)) }
        }
        return ended ? nil : group
    }

    /// Makes `group` the most recently used.
    func touch(_ key: Key, _ group: Group) {
        stamp += 1
        group.stamp = stamp
        recency.append((key, stamp))
        compact()
    }

    /// The key of the open group used least recently, taken off the front of `recency`.
    func leastRecentlyUsed() -> Key? {
        while head < recency.count {
            let (key, entryStamp) = recency[head]
            head += 1
            if groups[key]?.stamp == entryStamp { return key }
        }
        return nil
    }

    /// Drops the stale front of `recency` once it is half of it, so it stays bounded.
    func compact() {
        if head > 1024 && head * 2 > recency.count {
            recency.removeFirst(head)
            head = 0
        }
    }

    /// Closes the group once `idle` has passed since its latest element; the timer is set once
    /// per quiet period, not once per element.
    func armIdle(_ key: Key, _ group: Group, idle: RxTimeInterval, after delay: RxTimeInterval) {
        guard let scheduler = limits?.scheduler else { return }
        group.timer.disposable = scheduler.schedule(after: delay) { [weak self, weak group] in
            guard let self, let group, !self.ended, self.groups[key] === group else { return }
            let quiet = self.now - group.lastElement
            if quiet >= idle {
                self.close(key)
            } else {
                self.armIdle(key, group, idle: idle, after: idle - quiet)
            }
        }
    }

    func close(_ key: Key) {
        guard let group = groups.removeValue(forKey: key) else { return }
        group.timer.dispose()
        group.subject.on(.completed)
    }

    /// The source ended: every open group gets the end, least recently used first, then the result.
    func end(_ event: Event<Element>) {
        ended = true
        while let key = leastRecentlyUsed() {
            guard let group = groups.removeValue(forKey: key) else { continue }
            group.timer.dispose()
            group.subject.on(event)
        }
        switch event {
        case .error(let error): forwardTerminal(.error(error))
        default: forwardTerminal(.completed)
        }
        sourceLifetime.lifetime.dispose()
    }
}

extension GroupBySink where Key: StateRepresentable {
    /// Opens again the groups `state` restored and registers how a checkpoint reads the open ones.
    func keep(in state: OperatorState<Key>) {
        let restored = state.takeRestored()
        // A checkpoint of an earlier version kept the list of groups alone.
        for entry in restored?.stateField("groups")?.stateList ?? restored?.stateList ?? [] {
            guard let number = entry.stateField("slot")?.stateInteger, let key = entry.stateField("key") else {
                continue
            }
            guard open(key, number: number, quiet: entry.stateField("quiet")?.stateDuration ?? .zero) != nil else {
                return
            }
        }
        nextNumber = max(nextNumber, restored?.stateField("next")?.stateInteger ?? 0)
        state.keep({ self.saved() }, origins: { [] }, until: lifetime)
    }

    /// The open groups, least recently used first (each one's number, key and how long it has
    /// been quiet), and the number the next group takes.
    func saved() -> Key {
        var list: [Key] = []
        for (key, entryStamp) in recency[head...] {
            guard let group = groups[key], group.stamp == entryStamp else { continue }
            list.append(
                Key(stateRecord: [
                    ("slot", Key(stateInteger: group.number)), ("key", key),
                    ("quiet", Key(stateDuration: now - group.lastElement)),
                ]))
        }
        return Key(stateRecord: [("groups", Key(stateList: list)), ("next", Key(stateInteger: nextNumber))])
    }
}
