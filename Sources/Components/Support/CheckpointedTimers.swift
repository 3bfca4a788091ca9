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

/// `buffer` as a checkpoint keeps it: the list collecting, and the time left in its window.
enum CheckpointedBuffer {
    final class State {
        var items: [Value] = []
        var windowEnd: RxTime = .zero
        var window = 0
    }

    static func make(_ source: Observable<Value>, timeSpan: RxTimeInterval, count: Int, context: ComponentContext)
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
            func startWindow(_ length: RxTimeInterval) {
                let current = state.window
                state.windowEnd = scheduler.now + length
                timer.disposable = scheduler.schedule(after: length) {
                    guard current == state.window, !lifetime.isDisposed else { return }
                    emitAndRestart()
                }
            }
            func emitAndRestart() {
                state.window &+= 1
                let full = state.items
                state.items = []
                observer.on(.next(.array(full)))
                if !lifetime.isDisposed { startWindow(timeSpan) }
            }
            checkpoints?.register(key) {
                ["items": .array(state.items), "left": max(.zero, state.windowEnd - scheduler.now).checkpointValue]
            }
            state.items = restored?["items"]?.arrayValue ?? []
            startWindow(RxTimeInterval(checkpointValue: restored?["left"]) ?? timeSpan)
            source.subscribe(
                AnyObserver { event in
                    guard !lifetime.isDisposed else { return }
                    switch event {
                    case .next(let element):
                        state.items.append(element)
                        if state.items.count >= count { emitAndRestart() }
                    case .error:
                        state.items = []
                        observer.on(event)
                        lifetime.dispose()
                    case .completed:
                        let last = state.items
                        state.items = []
                        observer.on(.next(.array(last)))
                        observer.on(.completed)
                        lifetime.dispose()
                    }
                }, in: lifetime.makeChild())
        }
    }
}

/// `throttle` as a checkpoint keeps it: how long ago it last sent an element, and the element
/// waiting for the window's end. Restored, the window ends when it had left to end.
enum CheckpointedThrottle {
    final class State {
        var lastSent: RxTime?
        var pending: Value?
        var completionPending = false
    }

    static func make(_ source: Observable<Value>, dueTime: RxTimeInterval, latest: Bool, context: ComponentContext)
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
            func sendNow(_ element: Value) {
                state.pending = nil
                observer.on(.next(element))
                state.lastSent = scheduler.now
            }
            func arm(after delay: RxTimeInterval) {
                timer.disposable = scheduler.schedule(after: delay) {
                    guard !lifetime.isDisposed else { return }
                    if let element = state.pending { sendNow(element) }
                    if state.completionPending {
                        observer.on(.completed)
                        lifetime.dispose()
                    }
                }
            }
            checkpoints?.register(key) {
                var saved = JSONObject()
                if let lastSent = state.lastSent { saved["since"] = (scheduler.now - lastSent).checkpointValue }
                if let pending = state.pending { saved["pending"] = pending }
                return .object(saved)
            }
            if let since = RxTimeInterval(checkpointValue: restored?["since"]) {
                state.lastSent = scheduler.now - since
                if let pending = restored?["pending"] {
                    state.pending = pending
                    arm(after: max(.zero, dueTime - since))
                }
            }
            source.subscribe(
                AnyObserver { event in
                    guard !lifetime.isDisposed else { return }
                    switch event {
                    case .next(let element):
                        let remaining = state.lastSent.map { dueTime - (scheduler.now - $0) } ?? .zero
                        if remaining <= .zero { return sendNow(element) }
                        guard latest else { return }
                        let armed = state.pending != nil
                        state.pending = element
                        if !armed { arm(after: remaining) }
                    case .error:
                        state.pending = nil
                        observer.on(event)
                        lifetime.dispose()
                    case .completed:
                        if state.pending != nil {
                            state.completionPending = true
                        } else {
                            observer.on(.completed)
                            lifetime.dispose()
                        }
                    }
                }, in: lifetime.makeChild())
        }
    }
}
