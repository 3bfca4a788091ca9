@_spi(Host) import Pipeline
import Reactive

// The timed operators as a checkpoint keeps them (used only under `--state`; otherwise the
// runtime's operators run). Restored, each goes on as if no time had passed while the run was
// down: what it held comes out when it had left to come.

/// A duration in a checkpoint: whole nanoseconds.
extension RxTimeInterval {
    var checkpointValue: Value { .int(Int(totalNanoseconds)) }

    init?(checkpointValue value: Value?) {
        guard let nanoseconds = value?.intValue else { return nil }
        self = .nanoseconds(Int64(nanoseconds))
    }
}

/// What a checkpointed timed operator has for one subscription.
struct TimedOperatorFrame {
    let scheduler: any SchedulerType
    /// Its state at the checkpoint the run resumes from (the first subscription only).
    let restored: Value?
    let observer: AnyObserver<Value>
    let lifetime: Lifetime
    /// One timer, cancelled with the subscription.
    let timer: SerialDisposable
    /// Registers how a checkpoint reads the operator's state.
    let keep: (@escaping () -> Value) -> Void

    /// Sends a terminal event and ends the subscription.
    func end(_ event: Event<Value>) {
        observer.on(event)
        lifetime.dispose()
    }

    /// The time left until a time, never negative, as a checkpoint keeps it. (A checkpoint's
    /// reader uses this, never the frame: the frame reaches the whole pipeline, which holds the
    /// checkpoints.)
    var timeLeft: (RxTime) -> Value {
        let scheduler = self.scheduler
        return { time in max(.zero, time - scheduler.now).checkpointValue }
    }

    /// A checkpointed operator on `source`: `start` sets up one subscription's state and returns
    /// what to do with each event of `source` (none arrives after the subscription ends).
    static func makeOperator(
        _ source: Observable<Value>, context: ComponentContext,
        _ start: @escaping (TimedOperatorFrame) -> (Event<Value>) -> Void
    ) -> Observable<Value> {
        let scheduler = context.scheduler
        let checkpoints = context.checkpoints
        let key = context.checkpointKey
        return Observable { observer, lifetime in
            let timer = SerialDisposable()
            lifetime.add(timer)
            let frame = TimedOperatorFrame(
                scheduler: scheduler, restored: checkpoints?.takeRestoredState(key), observer: observer,
                lifetime: lifetime, timer: timer,
                // Weak: a checkpoint's reader holds this frame, so the frame must not hold the checkpoints.
                keep: { [weak checkpoints] read in checkpoints?.register(key, read: read) })
            let handle = start(frame)
            source.subscribe(
                AnyObserver { event in
                    guard !lifetime.isDisposed else { return }
                    handle(event)
                }, in: lifetime.makeChild())
        }
    }
}

/// `debounce`: keeps the pending element and the time left until it is due.
enum CheckpointedDebounce {
    final class State {
        var pending: Value?
        var due: RxTime = .zero
    }

    static func make(_ source: Observable<Value>, dueTime: RxTimeInterval, context: ComponentContext)
        -> Observable<Value>
    {
        TimedOperatorFrame.makeOperator(source, context: context) { frame in
            let state = State()
            func arm(after delay: RxTimeInterval) {
                state.due = frame.scheduler.now + delay
                frame.timer.disposable = frame.scheduler.schedule(after: delay) {
                    guard !frame.lifetime.isDisposed, let element = state.pending else { return }
                    state.pending = nil
                    frame.observer.on(.next(element))
                }
            }
            let timeLeft = frame.timeLeft
            frame.keep {
                guard let pending = state.pending else { return .object(JSONObject()) }
                return ["pending": pending, "left": timeLeft(state.due)]
            }
            if let pending = frame.restored?["pending"],
                let left = RxTimeInterval(checkpointValue: frame.restored?["left"])
            {
                state.pending = pending
                arm(after: left)
            }
            return { event in
                switch event {
                case .next(let element):
                    state.pending = element
                    arm(after: dueTime)
                case .error:
                    state.pending = nil
                    frame.end(event)
                case .completed:
                    if let element = state.pending {
                        state.pending = nil
                        frame.observer.on(.next(element))
                    }
                    frame.end(.completed)
                }
            }
        }
    }
}

/// `delay`: keeps every element (and a completion) still waiting, with the time left for each.
enum CheckpointedDelay {
    final class State {
        var waiting: [(event: Event<Value>, due: RxTime)] = []
    }

    static func make(_ source: Observable<Value>, dueTime: RxTimeInterval, context: ComponentContext)
        -> Observable<Value>
    {
        TimedOperatorFrame.makeOperator(source, context: context) { frame in
            let state = State()
            func schedule(_ event: Event<Value>, after delay: RxTimeInterval) {
                state.waiting.append((event, frame.scheduler.now + delay))
                frame.lifetime.add(
                    frame.scheduler.schedule(after: delay) {
                        guard !frame.lifetime.isDisposed, !state.waiting.isEmpty else { return }
                        let first = state.waiting.removeFirst().event
                        if first.isStopEvent { frame.end(first) } else { frame.observer.on(first) }
                    })
            }
            let timeLeft = frame.timeLeft
            frame.keep {
                .array(
                    state.waiting.map { entry in
                        let left = timeLeft(entry.due)
                        if case .next(let element) = entry.event { return ["next": element, "left": left] }
                        return ["completed": true, "left": left]
                    })
            }
            for entry in frame.restored?.arrayValue ?? [] {
                schedule(
                    entry["next"].map { .next($0) } ?? .completed,
                    after: RxTimeInterval(checkpointValue: entry["left"]) ?? .zero)
            }
            return { event in
                // Errors are not delayed, and drop what waits.
                if case .error = event { return frame.end(event) }
                schedule(event, after: dueTime)
            }
        }
    }
}

/// `buffer`: keeps the list collecting and the time left in its window.
enum CheckpointedBuffer {
    final class State {
        var items: [Value] = []
        var windowEnd: RxTime = .zero
        var window = 0
    }

    static func make(_ source: Observable<Value>, timeSpan: RxTimeInterval, count: Int, context: ComponentContext)
        -> Observable<Value>
    {
        TimedOperatorFrame.makeOperator(source, context: context) { frame in
            let state = State()
            func startWindow(_ length: RxTimeInterval) {
                let current = state.window
                state.windowEnd = frame.scheduler.now + length
                frame.timer.disposable = frame.scheduler.schedule(after: length) {
                    guard current == state.window, !frame.lifetime.isDisposed else { return }
                    emitAndRestart()
                }
            }
            func emitAndRestart() {
                state.window &+= 1
                let full = state.items
                state.items = []
                frame.observer.on(.next(.array(full)))
                if !frame.lifetime.isDisposed { startWindow(timeSpan) }
            }
            let timeLeft = frame.timeLeft
            frame.keep { ["items": .array(state.items), "left": timeLeft(state.windowEnd)] }
            state.items = frame.restored?["items"]?.arrayValue ?? []
            startWindow(RxTimeInterval(checkpointValue: frame.restored?["left"]) ?? timeSpan)
            return { event in
                switch event {
                case .next(let element):
                    state.items.append(element)
                    if state.items.count >= count { emitAndRestart() }
                case .error:
                    state.items = []
                    frame.end(event)
                case .completed:
                    let last = state.items
                    state.items = []
                    frame.observer.on(.next(.array(last)))
                    frame.end(.completed)
                }
            }
        }
    }
}

/// `throttle`: keeps how long ago it last sent an element, and the element waiting for the
/// window's end.
enum CheckpointedThrottle {
    final class State {
        var lastSent: RxTime?
        var pending: Value?
        var completionPending = false
    }

    static func make(_ source: Observable<Value>, dueTime: RxTimeInterval, latest: Bool, context: ComponentContext)
        -> Observable<Value>
    {
        TimedOperatorFrame.makeOperator(source, context: context) { frame in
            let state = State()
            func sendNow(_ element: Value) {
                state.pending = nil
                frame.observer.on(.next(element))
                state.lastSent = frame.scheduler.now
            }
            func arm(after delay: RxTimeInterval) {
                frame.timer.disposable = frame.scheduler.schedule(after: delay) {
                    guard !frame.lifetime.isDisposed else { return }
                    if let element = state.pending { sendNow(element) }
                    if state.completionPending { frame.end(.completed) }
                }
            }
            let scheduler = frame.scheduler
            frame.keep {
                var saved = JSONObject()
                if let lastSent = state.lastSent { saved["since"] = (scheduler.now - lastSent).checkpointValue }
                if let pending = state.pending { saved["pending"] = pending }
                return .object(saved)
            }
            if let since = RxTimeInterval(checkpointValue: frame.restored?["since"]) {
                state.lastSent = frame.scheduler.now - since
                if let pending = frame.restored?["pending"] {
                    state.pending = pending
                    arm(after: max(.zero, dueTime - since))
                }
            }
            return { event in
                switch event {
                case .next(let element):
                    let remaining = state.lastSent.map { dueTime - (frame.scheduler.now - $0) } ?? .zero
                    if remaining <= .zero { return sendNow(element) }
                    guard latest else { return }
                    let armed = state.pending != nil
                    state.pending = element
                    if !armed { arm(after: remaining) }
                case .error:
                    state.pending = nil
                    frame.end(event)
                case .completed:
                    if state.pending != nil {
                        state.completionPending = true
                    } else {
                        frame.end(.completed)
                    }
                }
            }
        }
    }
}
