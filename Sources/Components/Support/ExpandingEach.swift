import Pipeline
import Reactive

/// `source` with each element replaced by what `expand` gives for it (none, one or many), in order:
/// how a plugin operator (`exec`, `wasm`) hands elements to its plugin. An error `expand` throws
/// ends the stream with it; `started` is given the subscription's lifetime first.
func expandingEach(
    _ source: Observable<Value>, started: @escaping (Lifetime) -> Void, _ expand: @escaping (Value) throws -> [Value]
) -> Observable<Value> {
    Observable { observer, lifetime in
        started(lifetime)
        let sink = ForwardingObserver(observer, lifetime)
        readEach(
            source, while: lifetime, in: lifetime,
            element: { element in
                for output in try expand(element) {
                    if lifetime.isDisposed { return }
                    sink.observer.on(.next(output))
                }
            },
            failed: { sink.finish(.error($0)) }, completed: { sink.finish(.completed) })
    }
}

/// An observer that ends its subscription at a terminal event.
struct ForwardingObserver {
    let observer: AnyObserver<Value>
    let lifetime: Lifetime

    init(_ observer: AnyObserver<Value>, _ lifetime: Lifetime) {
        self.observer = observer
        self.lifetime = lifetime
    }

    func finish(_ event: Event<Value>) {
        if lifetime.isDisposed { return }
        observer.on(event)
        lifetime.dispose()
    }
}
