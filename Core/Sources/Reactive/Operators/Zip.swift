extension Observable {
    /// Pairs the sources' elements by position: the first of each, then the second of each, and
    /// so on, combined with `resultSelector` (RxSwift's `zip` over a collection).
    ///
    /// Elements wait in a queue per source. An error ends the result at once. It completes when
    /// every source has completed, or when an element arrives that can never be paired: every
    /// other source has completed and one of them has nothing queued. With no sources it
    /// completes at once.
    @inlinable
    public static func zip(_ sources: [Observable<Element>]) -> Observable<[Element]> {
        Observable<[Element]>.zip(sources) { $0 }
    }

    /// `zip(_:)` with the elements of each position combined by `resultSelector`.
    @inlinable
    public static func zip<Source: ObservableType>(
        _ sources: [Source], resultSelector: @escaping ([Source.Element]) throws -> Element
    ) -> Observable<Element> {
        ZipSink<Element>.observable(
            sources.map { $0.asObservable().map { $0 as Any } }, completesWhenUnpairable: true
        ) { values in try resultSelector(values.map { $0 as! Source.Element }) }
    }

    /// Pairs two sources by position (RxSwift's `zip(_:_:resultSelector:)`). Unlike the collection
    /// form, it completes only when both sources have completed, as RxSwift's does.
    @inlinable
    public static func zip<A: ObservableType, B: ObservableType>(
        _ a: A, _ b: B, resultSelector: @escaping (A.Element, B.Element) throws -> Element
    ) -> Observable<Element> {
        ZipSink<Element>.observable(
            [a.asObservable().map { $0 as Any }, b.asObservable().map { $0 as Any }], completesWhenUnpairable: false
        ) { values in try resultSelector(values[0] as! A.Element, values[1] as! B.Element) }
    }

    /// Three sources by position; see `zip(_:_:resultSelector:)`.
    @inlinable
    public static func zip<A: ObservableType, B: ObservableType, C: ObservableType>(
        _ a: A, _ b: B, _ c: C, resultSelector: @escaping (A.Element, B.Element, C.Element) throws -> Element
    ) -> Observable<Element> {
        ZipSink<Element>.observable(
            [
                a.asObservable().map { $0 as Any }, b.asObservable().map { $0 as Any },
                c.asObservable().map { $0 as Any },
            ],
            completesWhenUnpairable: false
        ) { values in try resultSelector(values[0] as! A.Element, values[1] as! B.Element, values[2] as! C.Element) }
    }
}

extension Observable where Element: StateRepresentable {
    /// `zip(_:)` that keeps its state in `state` for checkpoints: each source's elements still
    /// waiting for a partner (and the origins they hold).
    @inlinable
    public static func zip(_ sources: [Observable<Element>], state: OperatorState<Element>?) -> Observable<[Element]> {
        guard let state else { return zip(sources) }
        return ZipSink<[Element]>.observable(
            sources.map { $0.map { $0 as Any } }, completesWhenUnpairable: true, prepare: { $0.keep(in: state) },
            resultSelector: { values in values.map { $0 as! Element } })
    }
}

@usableFromInline
final class ZipSink<Result>: Sink<Result> {
    @usableFromInline
    let resultSelector: ([Any]) throws -> Result
    @usableFromInline
    let completesWhenUnpairable: Bool
    @usableFromInline
    var queues: [[Any]]
    /// Each queued element's origin, beside it; the zipped element goes out on behalf of all of them.
    @usableFromInline
    var originQueues: [[Origin?]]
    @usableFromInline
    var heads: [Int]
    @usableFromInline
    var isDone: [Bool]

    @inlinable
    init(
        arity: Int, completesWhenUnpairable: Bool, resultSelector: @escaping ([Any]) throws -> Result,
        downstream: AnyObserver<Result>, lifetime: Lifetime
    ) {
        self.resultSelector = resultSelector
        self.completesWhenUnpairable = completesWhenUnpairable
        self.queues = Array(repeating: [], count: arity)
        self.originQueues = Array(repeating: [], count: arity)
        self.heads = Array(repeating: 0, count: arity)
        self.isDone = Array(repeating: false, count: arity)
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    static func observable(
        _ sources: [Observable<Any>], completesWhenUnpairable: Bool, prepare: ((ZipSink) -> Void)? = nil,
        resultSelector: @escaping ([Any]) throws -> Result
    ) -> Observable<Result> {
        Observable { observer, lifetime in
            let sink = ZipSink(
                arity: sources.count, completesWhenUnpairable: completesWhenUnpairable, resultSelector: resultSelector,
                downstream: observer, lifetime: lifetime)
            prepare?(sink)
            if sources.isEmpty {
                sink.forwardTerminal(.completed)
                return
            }
            sink.subscribeEach(sources) { sink.on($0, index: $1, $2) }
        }
    }

    @inlinable
    func queued(_ index: Int) -> Int { queues[index].count - heads[index] }

    @inlinable
    func on(_ event: Event<Any>, index: Int, _ sourceLifetime: Lifetime) {
        if isDisposed || sourceLifetime.isDisposed { return }
        switch event {
        case .next(let element):
            queues[index].append(element)
            originQueues[index].append(Origin.current)
            guard queues.indices.allSatisfy({ queued($0) > 0 }) else {
                if completesWhenUnpairable && queues.indices.allSatisfy({ $0 == index || isDone[$0] }) {
                    forwardTerminal(.completed)
                }
                return
            }
            var values: [Any] = []
            values.reserveCapacity(queues.count)
            var origins = HeldOrigins()
            for position in queues.indices {
                values.append(queues[position][heads[position]])
                if let origin = originQueues[position][heads[position]] {
                    origins.origins.append(origin)
                    // The slot stays until the queue is compacted; its origin goes with the zipped element.
                    originQueues[position][heads[position]] = nil
                }
                heads[position] += 1
                // The queue is compacted once it is drained, so it never grows without bound.
                if heads[position] == queues[position].count {
                    queues[position].removeAll(keepingCapacity: true)
                    originQueues[position].removeAll(keepingCapacity: true)
                    heads[position] = 0
                }
            }
            do {
                let result = try resultSelector(values)
                if let origin = origins.take() {
                    Origin.with(origin) { forward(.next(result)) }
                } else {
                    forward(.next(result))
                }
            } catch {
                forwardTerminal(.error(error))
            }
        case .error(let error):
            forwardTerminal(.error(error))
        case .completed:
            sourceLifetime.dispose()
            if isDone[index] { return }
            isDone[index] = true
            if isDone.allSatisfy({ $0 }) { forwardTerminal(.completed) }
        }
    }
}

extension ZipSink {
    /// Takes each source's waiting elements, and which sources had completed, from what `state`
    /// restored, and registers how a checkpoint reads this subscription.
    @usableFromInline
    func keep<Element: StateRepresentable>(in state: OperatorState<Element>) {
        if let restored = state.takeRestored() {
            for (index, queue) in (restored.stateField("queues")?.stateList ?? []).enumerated()
            where index < queues.count {
                for element in queue.stateList ?? [] {
                    queues[index].append(element)
                    originQueues[index].append(nil)
                }
            }
            for (index, done) in (restored.stateField("done")?.stateList ?? []).enumerated() where index < isDone.count
            {
                isDone[index] = done.stateInteger == 1
            }
        }
        state.keep(
            {
                Element(stateRecord: [
                    (
                        "queues",
                        Element(
                            stateList: self.queues.indices.map { index in
                                Element(
                                    stateList: self.queues[index][self.heads[index]...].compactMap { $0 as? Element })
                            })
                    ),
                    ("done", Element(stateList: self.isDone.map { Element(stateInteger: $0 ? 1 : 0) })),
                ])
            },
            origins: {
                self.originQueues.indices.flatMap { index in
                    self.originQueues[index][self.heads[index]...].compactMap { $0 }
                }
            }, until: lifetime)
    }
}
