@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// A timed event of an `events` source: at a time after subscription (or pipeline start, when
/// hot), an element, an error or completion.
struct TimelineEntry {
    let at: RxTimeInterval
    let event: Event<Value>

    /// Reads `[{at: 100ms, next: x}, {at: 200ms, error: "..."}, {at: 300ms, complete: true}]`.
    static func parse(_ value: Value, context: ComponentContext?) throws -> [TimelineEntry] {
        guard case .array(let items) = value else {
            throw TimelineError("a timeline is a list of {at, next | error | complete}, got \(value.typeName)")
        }
        return try items.enumerated().map { index, item in
            do {
                return try entry(item, index: index, context: context)
            } catch var error as TimelineError {
                error.entry = index
                throw error
            }
        }
    }

    /// Entry number `index` (from 0) of a timeline.
    static func entry(_ item: Value, index: Int, context: ComponentContext?) throws -> TimelineEntry {
        guard case .object(let object) = item else {
            throw TimelineError(
                "timeline entry \(index + 1) must be a mapping {at, next | error | complete}, got \(item.typeName)")
        }
        let at: RxTimeInterval
        switch object["at"] {
        case nil:
            throw TimelineError("timeline entry \(index + 1) needs 'at', a time such as 150ms")
        case .string(let text)?:
            guard let duration = DurationSyntax.parse(text) else {
                throw TimelineError(
                    "timeline entry \(index + 1): invalid time '\(text)'\(DurationSyntax.hint(for: text))")
            }
            at = duration
        case let other?:
            var hint = ""
            if let number = other.doubleValue, number.isFinite, abs(number) < 1e12 {
                hint = "; add a unit: \(number == number.rounded() ? String(Int(number)) : String(number))ms"
            }
            throw TimelineError(
                "timeline entry \(index + 1): 'at' must be a time such as 150ms, got \(other.typeName)\(hint)")
        }
        // An unknown key first: `nex` is more likely a misspelt `next` than a missing one.
        let unknown = object.keys.filter { !["at", "next", "error", "complete"].contains($0) }
        if let key = unknown.first {
            throw TimelineError(
                "timeline entry \(index + 1): unknown key '\(key)'; entries have at and next, error or complete")
        }
        let kinds = ["next", "error", "complete"].filter { object[$0] != nil }
        guard kinds.count == 1 else {
            throw TimelineError("timeline entry \(index + 1) needs exactly one of next, error, complete")
        }
        switch kinds[0] {
        case "next": return TimelineEntry(at: at, event: .next(object["next"]!))
        case "error":
            let message = object["error"]?.stringValue ?? object["error"]!.description
            let error: any Error = context.map { $0.error(message) } ?? TimelineError(message)
            return TimelineEntry(at: at, event: .error(error))
        default: return TimelineEntry(at: at, event: .completed)
        }
    }

    /// Reads a marble diagram: `-` is one tick, a letter an element (looked up in `values`),
    /// `|` completion, `#` an error, `( )` several events in one tick; spaces are ignored.
    static func parseMarbles(
        _ marbles: String, tick: RxTimeInterval, values: [String: Value], context: ComponentContext?
    ) throws -> [TimelineEntry] {
        var entries: [TimelineEntry] = []
        var time = 0
        var inGroup = false
        for character in marbles {
            let at = tick * time
            switch character {
            case " ": continue
            case "-":
                time += 1
                continue
            case "(":
                if inGroup { throw TimelineError("nested '(' in marbles '\(marbles)'") }
                inGroup = true
                continue
            case ")":
                if !inGroup { throw TimelineError("')' without '(' in marbles '\(marbles)'") }
                inGroup = false
                time += 1
                continue
            case "|":
                entries.append(TimelineEntry(at: at, event: .completed))
            case "#":
                let message = "error in marbles at \(DurationSyntax.format(at))"
                entries.append(
                    TimelineEntry(at: at, event: .error(context.map { $0.error(message) } ?? TimelineError(message))))
            default:
                let key = String(character)
                entries.append(TimelineEntry(at: at, event: .next(values[key] ?? YAMLDocument.plainScalar(key))))
            }
            if !inGroup { time += 1 }
        }
        if inGroup { throw TimelineError("'(' without ')' in marbles '\(marbles)'") }
        return entries
    }

    /// An observable playing `entries`: relative to subscription, or (hot) to the clock's zero.
    /// The timeline, keeping in checkpoints how many entries it emitted and how far along it was;
    /// resumed, it goes on as if no time had passed while the pipeline was down: the next entry
    /// comes when it had left to come (the entries before it are not repeated). One that had ended
    /// ends again at once.
    static func checkpointed(_ entries: [TimelineEntry], hot: Bool, context: ComponentContext) -> Observable<Value> {
        let scheduler = context.scheduler
        guard context.checkpoints != nil else { return observable(entries, hot: hot, scheduler: scheduler) }
        let checkpoints = context.checkpoints
        let key = context.checkpointKey
        return Observable.deferred {
            let restored = checkpoints?.takeRestoredState(key)
            let emitted = EmittedCount(restored?["emitted"]?.intValue ?? 0)
            let elapsed = restored?["elapsed"]?.stateDuration ?? .zero
            let start = scheduler.now
            checkpoints?.register(key) {
                ["emitted": .int(emitted.value), "elapsed": Value(stateDuration: elapsed + scheduler.now - start)]
            }
            var rest = entries.dropFirst(emitted.value).map {
                TimelineEntry(at: max(.zero, $0.at - elapsed), event: $0.event)
            }
            if rest.isEmpty, let last = entries.last, last.event.isStopEvent, emitted.value > 0 {
                // It had ended before the checkpoint: it ends again at once, or the resumed
                // pipeline (an operator's work still running then) would never end.
                rest = [TimelineEntry(at: .zero, event: last.event)]
            }
            return observable(rest, hot: hot, scheduler: scheduler).do(
                onNext: { _ in emitted.value += 1 }, onError: { _ in emitted.value += 1 },
                onCompleted: { emitted.value += 1 })
        }
    }

    static func observable(_ entries: [TimelineEntry], hot: Bool, scheduler: any SchedulerType) -> Observable<Value> {
        Observable { observer, lifetime in
            // One reading of the clock for all entries, so entries at the same time keep their order.
            let elapsed = hot ? scheduler.now : RxTime.zero
            for entry in entries {
                let delay = entry.at - elapsed
                if hot && delay < .zero { continue }
                lifetime.add(
                    scheduler.schedule(after: delay) {
                        if lifetime.isDisposed { return }
                        observer.on(entry.event)
                        if entry.event.isStopEvent { lifetime.dispose() }
                    })
            }
        }
    }
}

/// How many entries a checkpointed timeline emitted, shared by its observer and its checkpoint.
private final class EmittedCount {
    var value: Int

    init(_ value: Int) {
        self.value = value
    }
}

/// A timeline that cannot be read.
struct TimelineError: Error, CustomStringConvertible {
    let description: String
    /// The entry (from 0) it is about, when it is about one.
    var entry: Int?

    init(_ description: String) {
        self.description = description
    }
}
