/// What the sinks of `flatMap` and `flatMapLatest` share: the selector runs on each outer
/// element (a throw ends the result with its error), an outer error ends the result, and the
/// outer subscription is released at its completion, after which the subclass decides when the
/// result completes.
@usableFromInline
class InnerSubscribingSink<Element, InnerElement>: Sink<InnerElement> {
    @usableFromInline
    let selector: (Element) throws -> Observable<InnerElement>
    @usableFromInline
    let outerLifetime: Lifetime
    @usableFromInline
    var outerCompleted = false

    @inlinable
    init(
        selector: @escaping (Element) throws -> Observable<InnerElement>, downstream: AnyObserver<InnerElement>,
        lifetime: Lifetime
    ) {
        self.selector = selector
        self.outerLifetime = lifetime.makeChild()
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    final func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next(let element):
            let inner: Observable<InnerElement>
            do {
                inner = try selector(element)
            } catch {
                forwardTerminal(.error(error))
                return
            }
            // The outer element's message stays open until its inner is done.
            if let origin = Origin.current { accept(inner.carrying(origin)) } else { accept(inner) }
        case .error(let error):
            forwardTerminal(.error(error))
        case .completed:
            outerLifetime.dispose()
            outerCompleted = true
            outerDidComplete()
        }
    }

    /// Takes the inner made for an outer element.
    @usableFromInline
    func accept(_ inner: Observable<InnerElement>) {}

    /// The outer sequence has completed: complete the result if no inner is left.
    @usableFromInline
    func outerDidComplete() {}

    /// An inner's event: its elements and its error go downstream; its completion releases it, and
    /// the subclass decides what follows.
    @usableFromInline
    final func onInner(_ event: Event<InnerElement>, _ innerLifetime: Lifetime) {
        if isDisposed || innerLifetime.isDisposed { return }
        switch event {
        case .next:
            forward(event)
        case .error:
            forwardTerminal(event)
        case .completed:
            innerLifetime.dispose()
            innerDidComplete(innerLifetime)
        }
    }

    /// The inner of `innerLifetime` has completed (and been released).
    @usableFromInline
    func innerDidComplete(_ innerLifetime: Lifetime) {}
}
