@_spi(Host) import Pipeline
import Reactive

/// The event time of a run: one clock (an `EventTimeScheduler`) shared by every stream that
/// declares `eventTime`, and the elements waiting for its watermark.
///
/// Each `eventTime` subscription is an input. An input's own watermark is the largest time it has
/// seen minus its `maxDelay`; the clock's watermark is the smallest of the inputs that are neither
/// idle nor ended (so merged streams wait for the slowest). Elements wait here until the
/// watermark reaches their time and are then delivered in time order (arrival order within one
/// millisecond), with the clock at their time: downstream, every operator sees time go forward
/// only, as on a virtual clock, whatever order the elements came in.
final class EventTimeDomain {
    let clock: EventTimeScheduler

    /// One input: a stream's `eventTime`.
    final class Input {
        let maxDelay: Int64
        /// The largest time seen; nil before the first element.
        var latest: Int64?
        /// Whether it has had no element for its `idle` time; then its watermark is `idleMark`.
        var isIdle = false
        var idleMark: Int64?
        var hasEnded = false
        var ended: (() -> Void)?
        let deliver: (Value) -> Void
        /// How many of its elements wait.
        var waiting = 0
        /// What waited when it was removed (the run stopped): the run's last checkpoint keeps it.
        var waitingWhenRemoved: [(time: Int64, element: Value, origin: Origin?)]?

        init(maxDelay: Int64, deliver: @escaping (Value) -> Void) {
            self.maxDelay = maxDelay
            self.deliver = deliver
        }
    }

    private struct Waiting {
        let time: Int64
        let sequence: UInt64
        let element: Value
        let origin: Origin?
        let input: Input
    }

    /// Elements waiting for the watermark, by (time, arrival), from `head` on (those before it
    /// were delivered; the array is compacted now and then).
    private var waiting: [Waiting] = []
    private var head = 0
    private var sequence: UInt64 = 0
    private var inputs: [ObjectIdentifier: Input] = [:]
    private var releasing = false

    init(base: any SchedulerType) {
        clock = EventTimeScheduler(base: base)
    }

    func add(_ input: Input) { inputs[ObjectIdentifier(input)] = input }

    func remove(_ input: Input) {
        input.waitingWhenRemoved = waitingElements(of: input)
        inputs[ObjectIdentifier(input)] = nil
        compact()
        waiting.removeAll { $0.input === input }
        release()
    }

    /// The watermark the inputs allow: the lowest of those active; with every input idle, the
    /// highest of their idle marks; `.max` once every input has ended; nil while an active one
    /// has seen nothing.
    private var allowed: Int64? {
        var lowest = Int64.max
        var active = false
        var idle: Int64?
        var open = false
        for input in inputs.values where !input.hasEnded {
            open = true
            if input.isIdle {
                if let mark = input.idleMark { idle = max(idle ?? mark, mark) }
                continue
            }
            active = true
            guard let latest = input.latest else { return nil }
            lowest = min(lowest, latest - input.maxDelay)
        }
        if active { return lowest }
        return open ? idle : .max
    }

    /// Takes an element at `time`: false if it is late (behind the watermark).
    func take(_ element: Value, at time: Int64, origin: Origin?, from input: Input) -> Bool {
        if !clock.isStarted { clock.start(at: time - input.maxDelay) }
        if time < clock.clock { return false }
        input.latest = max(input.latest ?? time, time)
        input.isIdle = false
        input.idleMark = nil
        sequence &+= 1
        let entry = Waiting(time: time, sequence: sequence, element: element, origin: origin, input: input)
        // Mostly in order: the place is found from the end.
        var index = waiting.count
        while index > head && waiting[index - 1].time > time { index -= 1 }
        waiting.insert(entry, at: index)
        input.waiting += 1
        release()
        return true
    }

    /// Whether an element at `time` would be late now.
    func isLate(_ time: Int64) -> Bool { clock.isStarted && time < clock.clock }

    /// Delivers what the watermark allows, in time order, and moves the clock to it.
    func release() {
        guard !releasing else { return }
        releasing = true
        defer { releasing = false }
        guard let allowed else { return endInputs() }
        while head < waiting.count, waiting[head].time <= allowed {
            let first = waiting[head]
            // The slot stays until compacted; its message must not.
            waiting[head] = Waiting(time: first.time, sequence: 0, element: .null, origin: nil, input: first.input)
            head += 1
            first.input.waiting -= 1
            clock.advance(to: first.time)
            Origin.with(first.origin) { first.input.deliver(first.element) }
        }
        // Every input ended: nothing more can come. The clock then goes on with the run's own
        // (what is still timed — a `delay`'s last elements — comes in its time); running it to
        // the end of time at once would never end a periodic timer.
        if allowed != .max { clock.advance(to: allowed) } else { followRunClock() }
        if head > 1024 && head * 2 > waiting.count { compact() }
        endInputs()
    }

    private var following = false

    /// After the end: the watermark moves on with the run's clock, to each next work due.
    private func followRunClock() {
        guard !following, let due = clock.nextDue else { return }
        following = true
        let base = clock.base
        _ = Origin.with(nil) {
            base.schedule(after: .milliseconds(max(0, due - clock.clock))) { [weak self] in
                guard let self else { return }
                self.following = false
                self.clock.advance(to: due)
                self.followRunClock()
            }
        }
    }

    private func compact() {
        waiting.removeFirst(head)
        head = 0
    }

    /// Ends the inputs that have ended and have nothing waiting.
    private func endInputs() {
        for input in inputs.values where input.hasEnded && input.waiting == 0 {
            if let ended = input.ended {
                input.ended = nil
                ended()
            }
        }
    }

    /// The elements of `input` that wait, for a checkpoint.
    func waitingElements(of input: Input) -> [(time: Int64, element: Value, origin: Origin?)] {
        if let removed = input.waitingWhenRemoved { return removed }
        return waiting[head...].filter { $0.input === input }.map { ($0.time, $0.element, $0.origin) }
    }

    /// `input` has had no element for `quiet` milliseconds of wall time (at least its `idle`): it
    /// no longer holds the watermark back, and its own goes on as if its time had kept going.
    func idle(_ input: Input, quietFor quiet: Int64) {
        input.isIdle = true
        input.idleMark = input.latest.map { $0 - input.maxDelay + quiet }
        release()
    }
}
