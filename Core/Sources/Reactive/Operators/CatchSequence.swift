extension Observable {
    /// The first source; on its error the next, subscribed in the tick of the error, and so on
    /// (RxSwift's `Observable.catch(sequence:)`). The first completion completes the result; the
    /// last source's error is the result's; with no sources it completes at once.
    @inlinable
    public static func `catch`(sequence sources: [Observable<Element>]) -> Observable<Element> {
        Observable { observer, lifetime in
            let sink = CatchSequenceSink(sources: sources, downstream: observer, lifetime: lifetime)
            sink.subscribeNext(lastError: nil)
        }
    }
}

@usableFromInline
final class CatchSequenceSink<Element>: Sink<Element> {
    @usableFromInline
    let sources: [Observable<Element>]
    @usableFromInline
    var nextIndex = 0

    @inlinable
    init(sources: [Observable<Element>], downstream: AnyObserver<Element>, lifetime: Lifetime) {
        self.sources = sources
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func subscribeNext(lastError: (any Error)?) {
        if isDisposed { return }
        guard nextIndex < sources.count else {
            forwardTerminal(lastError.map { .error($0) } ?? .completed)
            return
        }
        let source = sources[nextIndex]
        nextIndex += 1
        let sourceLifetime = lifetime.makeChild()
        source.subscribe(
            AnyObserver { event in
                if self.isDisposed || sourceLifetime.isDisposed { return }
                switch event {
                case .next: self.forward(event)
                case .completed: self.forwardTerminal(event)
                case .error(let error):
                    sourceLifetime.dispose()
                    self.subscribeNext(lastError: error)
                }
            }, in: sourceLifetime)
    }
}
