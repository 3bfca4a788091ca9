/// A group of `groupBy`: its key and the elements that have it.
public struct GroupedObservable<Key, Element>: ObservableType {
    /// The key every element of the group has.
    public let key: Key
    let source: Observable<Element>

    /// A group of `key` over `source`.
    public init(key: Key, source: Observable<Element>) {
        self.key = key
        self.source = source
    }

    /// The group's elements.
    public func asObservable() -> Observable<Element> { source }
}

extension ObservableType {
    /// Splits the elements by `keySelector` into groups, each emitted (as a `GroupedObservable`)
    /// when its first element arrives, just before that element (RxSwift's `groupBy`).
    ///
    /// A group only sends what arrives while it is subscribed. The source's completion or error
    /// goes to every open group first, then to the result; a throwing key selector is an error.
    /// The source stays subscribed while the result or any group is (a group subscribed after the
    /// result was disposed keeps it going).
    @inlinable
    public func groupBy<Key: Hashable>(keySelector: @escaping (Element) throws -> Key) -> Observable<
        GroupedObservable<Key, Element>
    > {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = GroupBySink(keySelector: keySelector, downstream: observer, lifetime: lifetime)
            lifetime.onDispose { sink.sourceLifetime.ownerDidEnd() }
            source.subscribe(AnyObserver(sink.on), in: sink.sourceLifetime.lifetime)
        }
    }
}

@usableFromInline
final class GroupBySink<Key: Hashable, Element>: Sink<GroupedObservable<Key, Element>> {
    @usableFromInline
    let keySelector: (Element) throws -> Key
    @usableFromInline
    let sourceLifetime = RefCountLifetime()
    @usableFromInline
    var groups: [Key: PublishSubject<Element>] = [:]
    /// The keys in the order their groups opened, so the end reaches them in that order.
    @usableFromInline
    var order: [Key] = []
    @usableFromInline
    var ended = false

    @inlinable
    init(
        keySelector: @escaping (Element) throws -> Key, downstream: AnyObserver<GroupedObservable<Key, Element>>,
        lifetime: Lifetime
    ) {
        self.keySelector = keySelector
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
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
                group.on(.next(element))
                return
            }
            let group = PublishSubject<Element>()
            groups[key] = group
            order.append(key)
            if !isDisposed {
                let refCount = sourceLifetime
                let published = group.asObservable()
                forward(
                    .next(
                        GroupedObservable(
                            key: key,
                            source: Observable { observer, groupLifetime in
                                refCount.hold(until: groupLifetime)
                                published.subscribe(observer, in: groupLifetime)
                            })))
            }
            group.on(.next(element))
        case .error, .completed:
            end(event)
        }
    }

    @inlinable
    func end(_ event: Event<Element>) {
        ended = true
        for key in order { groups[key]?.on(event) }
        groups.removeAll()
        switch event {
        case .error(let error): forwardTerminal(.error(error))
        default: forwardTerminal(.completed)
        }
        sourceLifetime.lifetime.dispose()
    }
}
