extension Observable {
    /// Mirrors whichever source sends an event first — an element, an error or a completion —
    /// and disposes of the others in that tick (RxSwift's `amb`). Sources are subscribed in
    /// order; with none, the result never emits.
    @inlinable
    public static func amb(_ sources: [Observable<Element>]) -> Observable<Element> {
        Observable { observer, lifetime in
            let sink = AmbSink(downstream: observer, lifetime: lifetime)
            for (index, source) in sources.enumerated() {
                if lifetime.isDisposed {
                    // An earlier source ended the result while it was subscribed: as in RxSwift,
                    // the rest are still subscribed, and let go at once.
                    let late = Lifetime()
                    source.subscribe(AnyObserver { _ in }, in: late)
                    late.dispose()
                    continue
                }
                let sourceLifetime = lifetime.makeChild()
                sink.sourceLifetimes.append(sourceLifetime)
                source.subscribe(AnyObserver { sink.on($0, index: index) }, in: sourceLifetime)
                // A source subscribed after the choice was made is let go at once, as in RxSwift.
                if let winner = sink.winner, winner != index { sourceLifetime.dispose() }
            }
        }
    }
}

extension ObservableType {
    /// Mirrors whichever of this sequence and `other` sends an event first; see `Observable.amb`.
    @inlinable
    public func amb<Other: ObservableType>(_ other: Other) -> Observable<Element> where Other.Element == Element {
        Observable.amb([asObservable(), other.asObservable()])
    }
}

@usableFromInline
final class AmbSink<Element>: Sink<Element> {
    @usableFromInline
    var winner: Int?
    @usableFromInline
    var sourceLifetimes: [Lifetime] = []

    @inlinable
    override init(downstream: AnyObserver<Element>, lifetime: Lifetime) {
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>, index: Int) {
        if isDisposed { return }
        if winner == nil {
            winner = index
            for (other, sourceLifetime) in sourceLifetimes.enumerated() where other != index {
                sourceLifetime.dispose()
            }
        }
        guard winner == index else { return }
        if event.isStopEvent { forwardTerminal(event) } else { forward(event) }
    }
}
