import Reactive

/// A stream with several readers: one subscription upstream, connected after all readers are in.
final class Multicast {
    let subject = PublishSubject<Value>()
    let source: Observable<Value>
    private var connected = false

    init(source: Observable<Value>) {
        self.source = source
    }

    var observable: Observable<Value> { subject.asObservable() }

    func connect(in lifetime: Lifetime) {
        guard !connected else { return }
        connected = true
        source.subscribe(AnyObserver(subject.on), in: lifetime.makeChild())
    }
}
