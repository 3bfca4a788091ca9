import Reactive

/// A side stream that carries a state (`executing`, `enabled`): a reader that subscribes after
/// the state was last set gets its current value first, as the Action library's `executing` and
/// `enabled` do. Without it, a stream built after its operator started would miss the initial
/// `false`.
final class SideStreamState {
    /// The side streams that are states; the others (`errors`, `elements`) are events.
    static let names: Set<String> = ["executing", "enabled"]
    let subject: PublishSubject<Value>
    var latest: Value?

    init(_ subject: PublishSubject<Value>) {
        self.subject = subject
    }

    /// Starts keeping the latest value, for the run's lifetime (before any reader subscribes).
    func follow(in lifetime: Lifetime) {
        subject.asObservable().subscribe(
            AnyObserver { event in
                if case .next(let value) = event { self.latest = value }
            }, in: lifetime.makeChild())
    }

    /// The stream as a reader sees it: the current value, then every change.
    var observable: Observable<Value> {
        Observable.deferred { [self] in
            guard let latest else { return subject.asObservable() }
            return subject.asObservable().startWith(latest)
        }
    }
}
