extension ObservableType {
    /// Passes an element only if no element with its key passed before (RxSwiftExt's `distinct`,
    /// with a key). With `maxKeys`, the oldest key is forgotten when there are more: memory stays
    /// bounded on unbounded keys, and a forgotten key passes again.
    @inlinable
    public func distinct<Key: Hashable>(by keySelector: @escaping (Element) throws -> Key, maxKeys: Int? = nil)
        -> Observable<Element>
    {
        distinctSink(keySelector, timeToLive: nil, maxKeys: maxKeys, scheduler: nil)
    }

    /// `distinct(by:maxKeys:)` where a key is forgotten `timeToLive` after its element passed, on
    /// `scheduler`'s clock: a repeat within that time is dropped (and does not extend it), one
    /// after it passes. A key's time is the time it last passed.
    @inlinable
    public func distinct<Key: Hashable>(
        by keySelector: @escaping (Element) throws -> Key, timeToLive: RxTimeInterval, maxKeys: Int? = nil,
        scheduler: any SchedulerType
    ) -> Observable<Element> {
        distinctSink(keySelector, timeToLive: timeToLive, maxKeys: maxKeys, scheduler: scheduler)
    }

    @inlinable
    func distinctSink<Key: Hashable>(
        _ keySelector: @escaping (Element) throws -> Key, timeToLive: RxTimeInterval?, maxKeys: Int?,
        scheduler: (any SchedulerType)?
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = DistinctSink(
                keySelector: keySelector, timeToLive: timeToLive, maxKeys: maxKeys, scheduler: scheduler,
                downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

extension ObservableType {
    /// `distinct(by:timeToLive:maxKeys:scheduler:)` (no time to live when nil) that keeps its state
    /// in `state` for checkpoints: the keys it remembers, oldest first, each with how long ago it
    /// passed. Restored, a key is forgotten when it had left to be.
    @inlinable
    public func distinct<Key: Hashable & StateRepresentable>(
        by keySelector: @escaping (Element) throws -> Key, timeToLive: RxTimeInterval?, maxKeys: Int? = nil,
        scheduler: any SchedulerType, state: OperatorState<Key>?
    ) -> Observable<Element> {
        guard let state else {
            return distinctSink(keySelector, timeToLive: timeToLive, maxKeys: maxKeys, scheduler: scheduler)
        }
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = DistinctSink(
                keySelector: keySelector, timeToLive: timeToLive, maxKeys: maxKeys, scheduler: scheduler,
                downstream: observer, lifetime: lifetime)
            sink.keep(in: state)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

extension ObservableType where Element: Hashable {
    /// Passes each element the first time it is seen; see `distinct(by:maxKeys:)`.
    @inlinable
    public func distinct() -> Observable<Element> { distinct(by: { $0 }) }
}

@usableFromInline
final class DistinctSink<Element, Key: Hashable>: Sink<Element> {
    @usableFromInline
    let keySelector: (Element) throws -> Key
    @usableFromInline
    let timeToLive: RxTimeInterval?
    @usableFromInline
    let maxKeys: Int?
    @usableFromInline
    let scheduler: (any SchedulerType)?
    /// Each remembered key, with when it passed and its place in `order`.
    @usableFromInline
    var seen: [Key: (passed: RxTime, stamp: Int)] = [:]
    /// Keys in the order they passed (a key that passed again later stands again, later): the
    /// oldest is the first whose stamp is still its key's.
    @usableFromInline
    var order: [(key: Key, stamp: Int)] = []
    @usableFromInline
    var head = 0
    @usableFromInline
    var stamp = 0

    @inlinable
    init(
        keySelector: @escaping (Element) throws -> Key, timeToLive: RxTimeInterval?, maxKeys: Int?,
        scheduler: (any SchedulerType)?, downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.keySelector = keySelector
        self.timeToLive = timeToLive
        self.maxKeys = maxKeys
        self.scheduler = scheduler
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next(let element) = event, !isDisposed else { return forwardEnd(event) }
        let key: Key
        do {
            key = try keySelector(element)
        } catch {
            return forwardTerminal(.error(error))
        }
        let now = scheduler?.now ?? RxTime.zero
        forgetExpired(now)
        if seen[key] != nil { return }
        stamp += 1
        seen[key] = (now, stamp)
        order.append((key, stamp))
        if let maxKeys, seen.count > maxKeys { forgetOldest() }
        compact()
        forward(event)
    }

    /// Forgets the keys whose time to live is over: they stand first in `order`.
    @inlinable
    func forgetExpired(_ now: RxTime) {
        guard let timeToLive else { return }
        while head < order.count {
            let (key, entryStamp) = order[head]
            guard let entry = seen[key], entry.stamp == entryStamp else {
                head += 1
                continue
            }
            if now - entry.passed < timeToLive { return }
            seen[key] = nil
            head += 1
        }
    }

    @inlinable
    func forgetOldest() {
        while head < order.count {
            let (key, entryStamp) = order[head]
            head += 1
            if seen[key]?.stamp == entryStamp {
                seen[key] = nil
                return
            }
        }
    }

    /// Drops the forgotten front of `order` once it is half of it, so it stays bounded.
    @inlinable
    func compact() {
        if head > 64 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}

extension DistinctSink where Key: StateRepresentable {
    /// Takes the keys `state` restored (each passed as long ago as it had) and registers how a
    /// checkpoint reads this subscription.
    @usableFromInline
    func keep(in state: OperatorState<Key>) {
        let now = scheduler?.now ?? .zero
        for entry in state.takeRestored()?.stateList ?? [] {
            guard let key = entry.stateField("key"), seen[key] == nil else { continue }
            stamp += 1
            seen[key] = (now - (entry.stateField("age")?.stateDuration ?? .zero), stamp)
            order.append((key, stamp))
        }
        state.keep(
            {
                let now = self.scheduler?.now ?? .zero
                return Key(
                    stateList: self.order[self.head...].compactMap { key, entryStamp in
                        guard let entry = self.seen[key], entry.stamp == entryStamp else { return nil }
                        return Key(stateRecord: [("key", key), ("age", Key(stateDuration: now - entry.passed))])
                    })
            }, origins: { [] }, until: lifetime)
    }
}
