extension ObservableType {
    /// Maps each element to an inner observable and merges what all inners emit.
    ///
    /// The selector runs when the element arrives and its inner is subscribed in the same tick.
    /// The result completes once the source and every inner have completed. Any error ends the
    /// result at once and releases every inner.
    @inlinable
    public func flatMap<Inner: ObservableType>(
        _ selector: @escaping (Element) throws -> Inner
    ) -> Observable<Inner.Element> {
        flatMap(maxConcurrent: nil, selector)
    }

    /// Like `flatMap(_:)`, with at most `maxConcurrent` inners subscribed at once (nil: no limit).
    /// Further inners wait in arrival order and start in the tick an active one completes.
    @inlinable
    public func flatMap<Inner: ObservableType>(
        maxConcurrent: Int?, _ selector: @escaping (Element) throws -> Inner
    ) -> Observable<Inner.Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = MergeSink<Element, Inner.Element>(
                selector: { try selector($0).asObservable() }, maxConcurrent: maxConcurrent,
                downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: sink.outerLifetime)
        }
    }
}

/// The sink of `flatMap`, `merge` and `concatMap`: several inners at once, up to a limit.
@usableFromInline
final class MergeSink<Element, InnerElement>: InnerSubscribingSink<Element, InnerElement> {
    @usableFromInline
    let maxConcurrent: Int
    @usableFromInline
    var waiting: [Observable<InnerElement>] = []
    @usableFromInline
    var waitingHead = 0
    @usableFromInline
    var activeCount = 0
    @usableFromInline
    var isDraining = false
    /// What a subscribed inner's slot holds until the queue is compacted.
    @usableFromInline
    static var taken: Observable<InnerElement> { .empty() }

    @inlinable
    init(
        selector: @escaping (Element) throws -> Observable<InnerElement>, maxConcurrent: Int?,
        downstream: AnyObserver<InnerElement>, lifetime: Lifetime
    ) {
        self.maxConcurrent = max(1, maxConcurrent ?? Int.max)
        super.init(selector: selector, downstream: downstream, lifetime: lifetime)
    }

    @usableFromInline
    override func accept(_ inner: Observable<InnerElement>) {
        waiting.append(inner)
        drain()
    }

    @usableFromInline
    override func outerDidComplete() {
        completeIfDone()
    }

    /// Subscribes waiting inners while below the limit; a loop, not recursion, so inners that
    /// complete synchronously do not grow the stack.
    @usableFromInline
    func drain() {
        if isDraining { return }
        isDraining = true
        while activeCount < maxConcurrent, waitingHead < waiting.count, !isDisposed {
            let inner = waiting[waitingHead]
            // The slot stays until the queue is compacted; what the inner holds (its outer
            // element's origin) goes with the inner.
            waiting[waitingHead] = Self.taken
            waitingHead += 1
            if waitingHead == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                waitingHead = 0
            }
            activeCount += 1
            let innerLifetime = lifetime.makeChild()
            let observer = AnyObserver { self.onInner($0, innerLifetime) }
            // An inner started when another ends (concatMap) works for its own outer element, which
            // it carries; not for the one whose end started it.
            if Origin.current == nil {
                inner.subscribe(observer, in: innerLifetime)
            } else {
                Origin.with(nil) { inner.subscribe(observer, in: innerLifetime) }
            }
        }
        isDraining = false
        completeIfDone()
    }

    @usableFromInline
    override func innerDidComplete(_ innerLifetime: Lifetime) {
        activeCount -= 1
        drain()
    }

    @usableFromInline
    func completeIfDone() {
        if outerCompleted && activeCount == 0 && waitingHead == waiting.count && !isDraining {
            forwardTerminal(.completed)
        }
    }
}
