/// The part every operator's sink shares: the downstream observer and the subscription's lifetime.
///
/// A sink forwards events downstream; on a terminal event it forwards it and ends the lifetime,
/// which releases every upstream subscription and timer in the same tick (RxSwift's auto-detach).
@usableFromInline
class Sink<Output> {
    @usableFromInline
    final let downstream: AnyObserver<Output>
    @usableFromInline
    final let lifetime: Lifetime

    @inlinable
    init(downstream: AnyObserver<Output>, lifetime: Lifetime) {
        self.downstream = downstream
        self.lifetime = lifetime
        Resources.made()
    }

    deinit { Resources.freed() }

    /// Whether the subscription has ended; events arriving after that are ignored.
    @inlinable
    final var isDisposed: Bool { lifetime.isDisposed }

    /// Sends an event downstream.
    @inlinable
    final func forward(_ event: Event<Output>) {
        downstream.on(event)
    }

    /// Sends a terminal event downstream, then ends the subscription.
    @inlinable
    final func forwardTerminal(_ event: Event<Output>) {
        if lifetime.isDisposed { return }
        downstream.on(event)
        lifetime.dispose()
    }

    /// Subscribes each of `sources` in order, each in a child of the sink's lifetime, and hands
    /// `on` each event with its source's index and lifetime; stops if the sink ends meanwhile.
    @inlinable
    final func subscribeEach<Input>(
        _ sources: [Observable<Input>], _ on: @escaping (Event<Input>, Int, Lifetime) -> Void
    ) {
        for (index, source) in sources.enumerated() {
            if lifetime.isDisposed { return }
            let sourceLifetime = lifetime.makeChild()
            source.subscribe(AnyObserver { on($0, index, sourceLifetime) }, in: sourceLifetime)
        }
    }

    /// Passes on an error or a completion with the sink's element type, ending the subscription;
    /// an element is ignored.
    @inlinable
    final func forwardEnd<Input>(_ event: Event<Input>) {
        switch event {
        case .next: return
        case .error(let error): forwardTerminal(.error(error))
        case .completed: forwardTerminal(.completed)
        }
    }

}

/// A sink that passes every event on unchanged and ends the subscription at a terminal event, for
/// operators whose only work happens around the source (`startWith`, `take(for:)`, `deferred`).
@usableFromInline
final class ForwardSink<Element>: Sink<Element> {
    @inlinable
    override init(downstream: AnyObserver<Element>, lifetime: Lifetime) {
        super.init(downstream: downstream, lifetime: lifetime)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed { return }
        if event.isStopEvent { forwardTerminal(event) } else { forward(event) }
    }
}
