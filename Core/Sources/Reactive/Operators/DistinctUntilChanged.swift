extension ObservableType where Element: Equatable {
    /// Drops elements equal to the last element passed on.
    @inlinable
    public func distinctUntilChanged() -> Observable<Element> {
        distinctUntilChanged({ $0 }, comparer: { $0 == $1 })
    }
}

extension ObservableType {
    /// Drops elements whose key equals the key of the last element passed on.
    @inlinable
    public func distinctUntilChanged<Key: Equatable>(
        _ keySelector: @escaping (Element) throws -> Key
    ) -> Observable<Element> {
        distinctUntilChanged(keySelector, comparer: { $0 == $1 })
    }

    /// Drops elements that `comparer` calls equal to the last element passed on.
    @inlinable
    public func distinctUntilChanged(
        _ comparer: @escaping (Element, Element) throws -> Bool
    ) -> Observable<Element> {
        distinctUntilChanged({ $0 }, comparer: comparer)
    }

    /// Drops elements whose key `comparer` calls equal to the key of the last element passed on.
    ///
    /// The first element always passes, without calling `comparer`. Keys are compared with the
    /// last *emitted* element's key. The original element, not its key, is emitted. A throwing key
    /// selector or comparer ends the sequence with its error at that element.
    @inlinable
    public func distinctUntilChanged<Key>(
        _ keySelector: @escaping (Element) throws -> Key, comparer: @escaping (Key, Key) throws -> Bool
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = DistinctUntilChangedSink(
                keySelector: keySelector, comparer: comparer, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }
}

@usableFromInline
final class DistinctUntilChangedSink<Element, Key>: Sink<Element> {
    @usableFromInline
    let keySelector: (Element) throws -> Key
    @usableFromInline
    let comparer: (Key, Key) throws -> Bool
    @usableFromInline
    @exclusivity(unchecked)
    var lastKey: Key?

    @inlinable
    init(
        keySelector: @escaping (Element) throws -> Key, comparer: @escaping (Key, Key) throws -> Bool,
        downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.keySelector = keySelector
        self.comparer = comparer
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        guard case .next(let element) = event, !isDisposed else { return forwardEnd(event) }
        do {
            let key = try keySelector(element)
            if let lastKey, try comparer(lastKey, key) { return }
            lastKey = key
            forward(event)
        } catch {
            forwardTerminal(.error(error))
        }
    }
}
