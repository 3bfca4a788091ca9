import Pipeline
import Reactive

/// Runs inner chains of operators — `groupBy`'s one per key, `window`'s one per window — and
/// merges what they emit into one observer. An error of any chain ends the result; once the outer
/// stream has completed, the result completes when the last chain does.
final class MergedChains {
    private let chain: PipelineOperator
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private var running = 0
    private var outerCompleted = false
    /// What each chain still running was given, with its origin, by a number of its own: a
    /// checkpoint keeps them, to run them again after a restart.
    private(set) var inputs: [Int: (items: [Value], origin: Origin?)] = [:]
    private var nextInput = 0

    init(chain: @escaping PipelineOperator, observer: AnyObserver<Value>, lifetime: Lifetime) {
        self.chain = chain
        self.observer = observer
        self.lifetime = lifetime
    }

    /// Runs the chain (or `through`, a chain of its own) over `input`, its elements merged into
    /// the result; `done` when it completed.
    func run(_ input: Observable<Value>, through own: PipelineOperator? = nil, done: (() -> Void)? = nil) {
        if lifetime.isDisposed { return }
        running += 1
        let chainLifetime = lifetime.makeChild()
        (own ?? chain)(input).subscribe(
            AnyObserver { [self] event in
                if lifetime.isDisposed { return }
                switch event {
                case .next: observer.on(event)
                case .error: finish(event)
                case .completed:
                    done?()
                    chainLifetime.dispose()
                    running -= 1
                    if outerCompleted && running == 0 { finish(.completed) }
                }
            }, in: chainLifetime)
    }

    /// Runs the chain over `items` on behalf of `origin`, keeping them until the chain completes.
    func run(_ items: [Value], origin: Origin?) {
        let number = nextInput
        nextInput += 1
        inputs[number] = (items, origin)
        Origin.with(origin) {
            run(Observable.from(items), done: { [weak self] in self?.inputs[number] = nil })
        }
    }

    /// The outer stream completed: the result completes once every chain has.
    func completeWhenDone() {
        outerCompleted = true
        if running == 0 { finish(.completed) }
    }

    /// Ends the result with `event` (an error of the outer stream, say).
    func finish(_ event: Event<Value>) {
        if lifetime.isDisposed { return }
        observer.on(event)
        lifetime.dispose()
    }
}
