extension ObservableType {
    /// Accumulates every element into `seed` with `accumulator` and, when the source completes,
    /// emits `mapResult` of the total and completes (RxSwift's `reduce`).
    ///
    /// Nothing is emitted before completion; an empty source gives `mapResult(seed)`. An error, or
    /// a throwing accumulator or `mapResult`, ends the result with that error and no total.
    @inlinable
    public func reduce<Accumulate, Result>(
        _ seed: Accumulate, accumulator: @escaping (Accumulate, Element) throws -> Accumulate,
        mapResult: @escaping (Accumulate) throws -> Result
    ) -> Observable<Result> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = ReduceSink(
                seed: seed, accumulator: accumulator, mapResult: mapResult, downstream: observer, lifetime: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }

    /// `reduce(_:accumulator:mapResult:)` that keeps its total in `state` for checkpoints (and
    /// starts from the total restored there); the origins of every element it took are held in
    /// that state, so a checkpoint settles them rather than the end of the stream.
    @inlinable
    public func reduce<Accumulate, Result>(
        _ seed: Accumulate, accumulator: @escaping (Accumulate, Element) throws -> Accumulate,
        mapResult: @escaping (Accumulate) throws -> Result, state: OperatorState<Accumulate>?
    ) -> Observable<Result> {
        guard let state else { return reduce(seed, accumulator: accumulator, mapResult: mapResult) }
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = ReduceSink(
                seed: state.takeRestored() ?? seed, accumulator: accumulator, mapResult: mapResult,
                downstream: observer, lifetime: lifetime)
            state.keep({ sink.accumulate }, origins: { sink.held.all }, until: lifetime)
            source.subscribe(AnyObserver(sink.on), in: lifetime)
        }
    }

    /// `reduce(_:accumulator:mapResult:)` emitting the total itself.
    @inlinable
    public func reduce<Accumulate>(
        _ seed: Accumulate, accumulator: @escaping (Accumulate, Element) throws -> Accumulate
    ) -> Observable<Accumulate> {
        reduce(seed, accumulator: accumulator, mapResult: { $0 })
    }
}

@usableFromInline
final class ReduceSink<Element, Accumulate, Result>: Sink<Result> {
    @usableFromInline
    var accumulate: Accumulate
    @usableFromInline
    let accumulator: (Accumulate, Element) throws -> Accumulate
    @usableFromInline
    let mapResult: (Accumulate) throws -> Result
    /// Every element's origin: the total goes out on behalf of all of them.
    @usableFromInline
    var held = HeldOrigins()

    @inlinable
    init(
        seed: Accumulate, accumulator: @escaping (Accumulate, Element) throws -> Accumulate,
        mapResult: @escaping (Accumulate) throws -> Result, downstream: AnyObserver<Result>, lifetime: Lifetime
    ) {
        self.accumulate = seed
        self.accumulator = accumulator
        self.mapResult = mapResult
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed { return }
        do {
            switch event {
            case .next(let element):
                accumulate = try accumulator(accumulate, element)
                held.keepCurrent()
            case .error(let error):
                forwardTerminal(.error(error))
            case .completed:
                let result = try mapResult(accumulate)
                Origin.with(Origin.joining(Origin.current, held.take())) { forward(.next(result)) }
                forwardTerminal(.completed)
            }
        } catch {
            forwardTerminal(.error(error))
        }
    }
}
