@_spi(Host) import Pipeline
import Reactive

/// A duration in a checkpoint: whole nanoseconds.
extension RxTimeInterval {
    var checkpointValue: Value { .int(Int(totalNanoseconds)) }

    init?(checkpointValue value: Value?) {
        guard let nanoseconds = value?.intValue else { return nil }
        self = .nanoseconds(Int64(nanoseconds))
    }
}

/// `debounce` as a checkpoint keeps it: the pending element and the time left until it is due.
/// Restored, the element is emitted when its time comes, unless a newer element replaces it.
/// (Used only under `--state`; otherwise the runtime's `debounce` runs.)
enum CheckpointedDebounce {
    final class State {
        var pending: Value?
        var due: RxTime = .zero
    }

    static func make(_ source: Observable<Value>, dueTime: RxTimeInterval, context: ComponentContext)
        -> Observable<Value>
    {
        let scheduler = context.scheduler
        let checkpoints = context.checkpoints
        let key = context.checkpointKey
        return Observable { observer, lifetime in
            let restored = checkpoints?.takeRestoredState(key)
            let state = State()
            let timer = SerialDisposable()
            lifetime.add(timer)
            func arm(after delay: RxTimeInterval) {
                state.due = scheduler.now + delay
                timer.disposable = scheduler.schedule(after: delay) {
                    guard !lifetime.isDisposed, let element = state.pending else { return }
                    state.pending = nil
                    observer.on(.next(element))
                }
            }
            checkpoints?.register(key) {
                guard let pending = state.pending else { return .object(JSONObject()) }
                return ["pending": pending, "left": max(.zero, state.due - scheduler.now).checkpointValue]
            }
            if let pending = restored?["pending"], let left = RxTimeInterval(checkpointValue: restored?["left"]) {
                state.pending = pending
                arm(after: left)
            }
            source.subscribe(
                AnyObserver { event in
                    guard !lifetime.isDisposed else { return }
                    switch event {
                    case .next(let element):
                        state.pending = element
                        arm(after: dueTime)
                    case .error:
                        state.pending = nil
                        observer.on(event)
                        lifetime.dispose()
                    case .completed:
                        if let element = state.pending {
                            state.pending = nil
                            observer.on(.next(element))
                        }
                        observer.on(.completed)
                        lifetime.dispose()
                    }
                }, in: lifetime.makeChild())
        }
    }
}

/// `delay` as a checkpoint keeps it: every element (and a completion) still waiting, with the
/// time left for each. Restored, each goes out when its time comes.
enum CheckpointedDelay {
    final class State {
        var waiting: [(event: Event<Value>, due: RxTime, timer: any Disposable)] = []
    }

    static func make(_ source: Observable<Value>, dueTime: RxTimeInterval, context: ComponentContext)
        -> Observable<Value>
    {
        let scheduler = context.scheduler
        let checkpoints = context.checkpoints
        let key = context.checkpointKey
        return Observable { observer, lifetime in
            let restored = checkpoints?.takeRestoredState(key)
            let state = State()
            func schedule(_ event: Event<Value>, after delay: RxTimeInterval) {
                let due = scheduler.now + delay
                let timer = scheduler.schedule(after: delay) {
                    guard !lifetime.isDisposed, !state.waiting.isEmpty else { return }
                    let first = state.waiting.removeFirst()
                    observer.on(first.event)
                    if first.event.isStopEvent { lifetime.dispose() }
                }
                state.waiting.append((event, due, timer))
                lifetime.add(timer)
            }
            checkpoints?.register(key) {
                let now = scheduler.now
                return .array(
                    state.waiting.map { entry in
                        let left = max(.zero, entry.due - now).checkpointValue
                        if case .next(let element) = entry.event { return ["next": element, "left": left] }
                        return ["completed": true, "left": left]
                    })
            }
            for entry in restored?.arrayValue ?? [] {
                let left = RxTimeInterval(checkpointValue: entry["left"]) ?? .zero
                schedule(entry["next"].map { .next($0) } ?? .completed, after: left)
            }
            source.subscribe(
                AnyObserver { event in
                    guard !lifetime.isDisposed else { return }
                    switch event {
                    case .next, .completed:
                        schedule(event, after: dueTime)
                    case .error:
                        // Errors are not delayed, and drop what waits.
                        observer.on(event)
                        lifetime.dispose()
                    }
                }, in: lifetime.makeChild())
        }
    }
}
