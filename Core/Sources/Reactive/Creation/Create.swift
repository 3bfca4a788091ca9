extension Observable {
    /// An observable from a subscribe function, as in RxSwift: call the observer, return what
    /// releases the work. Events after a terminal event are ignored, and a terminal event
    /// releases the subscription.
    public static func create(
        _ subscribe: @escaping (AnyObserver<Element>) -> any Disposable
    ) -> Observable<Element> {
        Observable { observer, lifetime in
            let guarded = AnyObserver<Element> { event in
                if lifetime.isDisposed { return }
                observer.on(event)
                if event.isStopEvent { lifetime.dispose() }
            }
            lifetime.add(subscribe(guarded))
        }
    }

    /// An observable created anew, by `factory`, for each subscription.
    @inlinable
    public static func deferred(_ factory: @escaping () throws -> Observable<Element>) -> Observable<Element> {
        Observable { observer, lifetime in
            do {
                let source = try factory()
                let sink = ForwardSink(downstream: observer, lifetime: lifetime)
                source.subscribe(AnyObserver(sink.on), in: lifetime)
            } catch {
                observer.on(.error(error))
                lifetime.dispose()
            }
        }
    }

    /// One element, then completion, synchronously at subscription.
    @inlinable
    public static func just(_ element: Element) -> Observable<Element> {
        Observable { observer, lifetime in
            observer.on(.next(element))
            if !lifetime.isDisposed { observer.on(.completed) }
        }
    }

    /// Completes at once, synchronously at subscription.
    @inlinable
    public static func empty() -> Observable<Element> {
        Observable { observer, _ in observer.on(.completed) }
    }

    /// Never sends anything.
    @inlinable
    public static func never() -> Observable<Element> {
        Observable { _, _ in }
    }

    /// Fails at once with `error`, synchronously at subscription.
    @inlinable
    public static func error(_ error: any Error) -> Observable<Element> {
        Observable { observer, _ in observer.on(.error(error)) }
    }

    /// The elements, in order, then completion.
    @inlinable
    public static func of(_ elements: Element...) -> Observable<Element> {
        from(elements)
    }

    /// The elements of a sequence, in order, then completion.
    ///
    /// Emitted in a loop at subscription (not one scheduler hop per element, which costs 6x);
    /// the loop stops as soon as the subscription is disposed.
    @inlinable
    public static func from<S: Sequence>(_ sequence: S) -> Observable<Element> where S.Element == Element {
        Observable { observer, lifetime in
            for element in sequence {
                if lifetime.isDisposed { return }
                observer.on(.next(element))
            }
            if !lifetime.isDisposed { observer.on(.completed) }
        }
    }
}

extension Observable where Element: FixedWidthInteger {
    /// `count` consecutive integers from `start`, synchronously, then completion.
    @inlinable
    public static func range(start: Element, count: Element) -> Observable<Element> {
        from(start..<(start + count))
    }
}
