extension Observable {
    /// Combines the latest elements of every source with `resultSelector`, once each source has
    /// produced an element, and again on every later element of any source.
    ///
    /// Sources are subscribed in order. The result completes when all sources have completed, or
    /// (RxSwift's rule) at an element that arrives while every other source has completed and one
    /// of them never emitted. With no sources, it emits `resultSelector([])` and completes at once.
    @inlinable
    public static func combineLatest<Source: ObservableType>(
        _ sources: [Source], resultSelector: @escaping ([Source.Element]) throws -> Element
    ) -> Observable<Element> {
        let observables = sources.map { $0.asObservable() }
        return Observable { observer, lifetime in
            let sink = CombineLatestSink(
                arity: observables.count, resultSelector: resultSelector, downstream: observer, lifetime: lifetime)
            if observables.isEmpty {
                do {
                    observer.on(.next(try resultSelector([])))
                    sink.forwardTerminal(.completed)
                } catch {
                    sink.forwardTerminal(.error(error))
                }
                return
            }
            sink.subscribeEach(observables) { sink.on($0, index: $1, $2) }
        }
    }

    /// Combines the latest elements of two sources; see `combineLatest(_:resultSelector:)`.
    @inlinable
    public static func combineLatest<A: ObservableType, B: ObservableType>(
        _ a: A, _ b: B, resultSelector: @escaping (A.Element, B.Element) throws -> Element
    ) -> Observable<Element> {
        let sources: [Observable<Either2<A.Element, B.Element>>] = [
            a.asObservable().map { .first($0) }, b.asObservable().map { .second($0) },
        ]
        return combineLatest(sources) { values in
            guard case .first(let first) = values[0], case .second(let second) = values[1] else {
                preconditionFailure("combineLatest: values out of place")
            }
            return try resultSelector(first, second)
        }
    }
}

extension Observable {
    /// `combineLatest(_:resultSelector:)` that keeps its state in `state` for checkpoints: each
    /// source's latest element and which sources have completed. Restored, a combination needs
    /// no source to emit again first.
    @inlinable
    public static func combineLatest<Source: ObservableType>(
        _ sources: [Source], state: OperatorState<Source.Element>?,
        resultSelector: @escaping ([Source.Element]) throws -> Element
    ) -> Observable<Element> where Source.Element: StateRepresentable {
        guard let state, !sources.isEmpty else { return combineLatest(sources, resultSelector: resultSelector) }
        let observables = sources.map { $0.asObservable() }
        return Observable { observer, lifetime in
            let sink = CombineLatestSink(
                arity: observables.count, resultSelector: resultSelector, downstream: observer, lifetime: lifetime)
            sink.keep(in: state)
            sink.subscribeEach(observables) { sink.on($0, index: $1, $2) }
        }
    }
}

extension ObservableType {
    /// Pairs the latest elements of this sequence and `other`; see `Observable.combineLatest`.
    @inlinable
    public func combineLatest<Other: ObservableType>(_ other: Other) -> Observable<(Element, Other.Element)> {
        Observable.combineLatest(self, other) { ($0, $1) }
    }
}

/// One of two values; lets sources of different types share one combining sink.
@usableFromInline
enum Either2<First, Second> {
    case first(First)
    case second(Second)
}

@usableFromInline
final class CombineLatestSink<Element, Result>: Sink<Result> {
    @usableFromInline
    let resultSelector: ([Element]) throws -> Result
    @usableFromInline
    var latest: [Element?]
    @usableFromInline
    var isDone: [Bool]
    @usableFromInline
    var valueCount = 0
    @usableFromInline
    var doneCount = 0

    @inlinable
    init(
        arity: Int, resultSelector: @escaping ([Element]) throws -> Result,
        downstream: AnyObserver<Result>, lifetime: Lifetime
    ) {
        self.resultSelector = resultSelector
        self.latest = Array(repeating: nil, count: arity)
        self.isDone = Array(repeating: false, count: arity)
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @usableFromInline
    func on(_ event: Event<Element>, index: Int, _ sourceLifetime: Lifetime) {
        if isDisposed || sourceLifetime.isDisposed { return }
        switch event {
        case .next(let element):
            if latest[index] == nil { valueCount += 1 }
            latest[index] = element
            if valueCount == latest.count {
                do {
                    forward(.next(try resultSelector(latest.map { $0! })))
                } catch {
                    forwardTerminal(.error(error))
                }
            } else if isDone.indices.allSatisfy({ $0 == index || isDone[$0] }) {
                forwardTerminal(.completed)
            }
        case .error(let error):
            forwardTerminal(.error(error))
        case .completed:
            sourceLifetime.dispose()
            if isDone[index] { return }
            isDone[index] = true
            doneCount += 1
            if doneCount == isDone.count { forwardTerminal(.completed) }
        }
    }
}

extension CombineLatestSink where Element: StateRepresentable {
    /// Takes what `state` restored (each source's latest element, which have completed) and
    /// registers how a checkpoint reads this subscription.
    @usableFromInline
    func keep(in state: OperatorState<Element>) {
        if let restored = state.takeRestored() {
            for (index, saved) in (restored.stateField("latest")?.stateList ?? []).enumerated()
            where index < latest.count {
                if let element = saved.stateList?.first {
                    if latest[index] == nil { valueCount += 1 }
                    latest[index] = element
                }
            }
            for (index, done) in (restored.stateField("done")?.stateList ?? []).enumerated()
            where index < isDone.count && done.stateInteger == 1 && !isDone[index] {
                isDone[index] = true
                doneCount += 1
            }
        }
        state.keep(
            {
                Element(stateRecord: [
                    ("latest", Element(stateList: self.latest.map { Element(stateList: $0.map { [$0] } ?? []) })),
                    ("done", Element(stateList: self.isDone.map { Element(stateInteger: $0 ? 1 : 0) })),
                ])
            }, origins: { [] }, until: lifetime)
    }
}
