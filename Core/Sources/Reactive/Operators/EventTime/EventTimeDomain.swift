import Synchronization

/// What holds windows and keys on an event-time clock (an `aggregate`'s copies), for a watched
/// run to show.
@_spi(Components) public protocol EventTimeHolding: AnyObject, Sendable {
    /// Windows open now.
    var windowsOpen: Int { get }
    /// Keys held now.
    var keysHeld: Int { get }
}

/// What the domain knows of one input, whatever its elements: its times, whether it is idle or
/// ended, how many of its elements wait. (Not generic: the domain reads it for every element, and
/// in code not specialised for the element type a generic one costs a type lookup each time.)
@_spi(Components) public class EventTimeInput {
    /// How far out of order its elements may come (ms).
    public let maxDelay: Int64
    /// Whether its elements go on as they come, each with its time in `elementTime`, instead
    /// of in time order once the watermark reaches them: an operator for which the order does
    /// not matter, only each element's time and the watermark (`aggregate`), takes them so.
    @exclusivity(unchecked) public var asTheyCome = false
    /// Whether its watermark is given (`drive`: a partition following the run's event time)
    /// rather than read from its elements.
    @exclusivity(unchecked) public var isDriven = false
    // Those read per element are unchecked, as the domain's own (see `inOrder`).
    /// The largest time seen; nil before the first element.
    @exclusivity(unchecked) public var latest: Int64?
    /// Whether it has had no element for its `idle` time; then its watermark is `idleMark`.
    @exclusivity(unchecked) public var isIdle = false
    /// Its watermark while idle: where its own would be had its time gone on with the wall's.
    @exclusivity(unchecked) public var idleMark: Int64?
    /// Whether it has no more elements (`EventTimeDomain.end`).
    @exclusivity(unchecked) public fileprivate(set) var hasEnded = false
    /// Called once it has ended and nothing of it waits.
    public var ended: (() -> Void)?
    /// How many of its elements wait.
    @exclusivity(unchecked) public internal(set) var waiting = 0
    /// Whether it holds nothing back for now: a subscription's own input once its elements
    /// come by lanes (`EventTimeInputs`), each lane an input of its own.
    @exclusivity(unchecked) public var standsAside = false
    /// Its place among a subscription's lane inputs (for a checkpoint's order).
    public var order = 0
    /// The partition of the lane it takes (nil: a subscription's own input).
    public var lane: Int?
    /// The watermark it allows: its latest time less `maxDelay`, or its idle mark; nil before
    /// its first element (it then holds the stream's back, unless idle).
    public var watermark: Int64? {
        if isIdle { return idleMark }
        return latest.map { $0 - maxDelay }
    }

    init(maxDelay: Int64) {
        self.maxDelay = maxDelay
    }
}

/// The event time of a run: one clock (an `EventTimeScheduler`) shared by every stream that
/// declares `eventTime`, and the elements waiting for its watermark. The `eventTime` operator
/// gives it its elements; other operators on the clock read what it is delivering
/// (`elementTime`, `lateTime`).
///
/// Each `eventTime` subscription is an input. An input's own watermark is the largest time it has
/// seen minus its `maxDelay`; the clock's watermark is the smallest of the inputs that are neither
/// idle nor ended (so merged streams wait for the slowest). Elements wait here until the
/// watermark reaches their time and are then delivered in time order (arrival order within one
/// millisecond), with the clock at their time and after the work due then: downstream, every
/// operator sees time go forward only, as on a virtual clock, whatever order the elements came in.
@_spi(Components) public final class EventTimeDomain<Element> {
    /// The clock every operator after an `eventTime` runs on.
    public let clock: EventTimeScheduler

    /// One input: a stream's `eventTime`.
    public final class Input: EventTimeInput {
        let deliver: (Element) -> Void
        /// Passes on the event an element taken at once came in, as it is (`deliver` would make
        /// a new event of the element: a copy, a reference count taken and given back). Not
        /// optional: a closure taken out of an optional is copied, its context retained.
        let forward: (Event<Element>) -> Void
        /// What waited when it was removed (the run stopped): the run's last checkpoint keeps it.
        var waitingWhenRemoved: [(time: Int64, element: Element, origin: Origin?)]?

        /// An input whose own watermark is its latest time less `maxDelay`; `deliver` takes its
        /// elements once the watermark reaches them, `forward` (if given) the events of those
        /// taken at once with their events.
        public init(
            maxDelay: Int64, deliver: @escaping (Element) -> Void, forward: ((Event<Element>) -> Void)? = nil
        ) {
            self.deliver = deliver
            self.forward =
                forward ?? { event in
                    if case .next(let element) = event { deliver(element) }
                }
            super.init(maxDelay: maxDelay)
        }
    }

    struct Waiting {
        let time: Int64
        let arrival: UInt64
        /// Nil once delivered (its slot waits to be compacted).
        var element: Element?
        var origin: Origin?
        // Unowned: the domain holds every input with elements waiting (`remove` takes them out
        // first), and a retain per waiting element is measurable.
        unowned(unsafe) let input: Input

        static func before(_ a: Waiting, _ b: Waiting) -> Bool {
            a.time != b.time ? a.time < b.time : a.arrival < b.arrival
        }
    }

    /// Elements that came in time order (at or after every time before them), oldest first from
    /// `head`: most elements, appended and taken in O(1). Delivered slots are cleared and the
    /// array compacted now and then.
    // These are read and written for every element, on the pipeline's thread only: unchecked,
    // as a dynamic exclusivity check costs a thread-local lookup each time.
    @exclusivity(unchecked) private var inOrder: [Waiting] = []
    @exclusivity(unchecked) private var head = 0
    /// The time of the last element appended to `inOrder`.
    @exclusivity(unchecked) private var inOrderLatest = Int64.min
    /// The others, in a heap by (time, arrival).
    @exclusivity(unchecked) private var outOfOrder = PriorityQueue<Waiting>(by: Waiting.before)
    @exclusivity(unchecked) private var arrivals: UInt64 = 0
    @exclusivity(unchecked) private var inputs: [EventTimeInput] = []
    /// How many elements wait in `inOrder` and `outOfOrder`: most of the time none, which is
    /// known without touching either.
    @exclusivity(unchecked) private var waitingCount = 0
    @exclusivity(unchecked) private var releasing = false
    /// How far behind the watermark an element may be and still go on (as a late one, for an
    /// `aggregate` with `allowedLateness` to update a window it emitted): the largest asked for.
    public var allowedLateness: Int64 {
        get { allowance }
        set { allowance = newValue }
    }
    /// The time of the late element being delivered now; nil while an on-time one is.
    public var lateTime: Int64? {
        @inline(__always) get { late }
    }
    /// The time of the element being delivered as it came (see `EventTimeInput.asTheyCome`).
    public var elementTime: Int64? {
        @inline(__always) get { asItCame }
    }
    // Read by the operators after it for every element: other modules read them through these
    // getters, as `@exclusivity(unchecked)` does not reach past the module (a stored property
    // read from one is checked each time).
    @exclusivity(unchecked) private var allowance: Int64 = 0
    @exclusivity(unchecked) private var late: Int64?
    @exclusivity(unchecked) private var asItCame: Int64?

    /// A domain whose clock has not started, on `base`'s thread.
    public init(base: any SchedulerType) {
        clock = EventTimeScheduler(base: base)
    }

    /// `input` holds the watermark back from now on (until it ends or is removed).
    public func add(_ input: Input) { inputs.append(input) }

    /// What holds windows and keys on this clock, for a watched run to show (registered as each
    /// is built, perhaps on a partition's thread).
    private let holders = Mutex<[any EventTimeHolding]>([])

    /// Counts what `holder` holds in `held` from now on (once, however often it is given).
    public func count(_ holder: any EventTimeHolding) {
        holders.withLock { holders in
            if !holders.contains(where: { $0 === holder }) { holders.append(holder) }
        }
    }

    /// The windows and keys held on this clock now, over every holder.
    public var held: (windows: Int, keys: Int) {
        holders.withLock { holders in
            holders.reduce((0, 0)) { ($0.0 + $1.windowsOpen, $0.1 + $1.keysHeld) }
        }
    }

    /// Whether an input has ended (until then, nothing is looked for to end).
    @exclusivity(unchecked) private var anyEnded = false

    /// `input` has no more elements: what waits goes on as the watermark allows, then it ends.
    public func end(_ input: Input) {
        input.hasEnded = true
        anyEnded = true
        release()
    }

    /// `input` leaves: what waits in it is dropped (kept in `waitingElements(of:)` for the run's
    /// last checkpoint).
    public func remove(_ input: Input) {
        input.waitingWhenRemoved = waitingElements(of: input)
        inputs.removeAll { $0 === input }
        compact()
        inOrder.removeAll { $0.input === input }
        outOfOrder.removeAll { $0.input === input }
        waitingCount = inOrder.count + outOfOrder.count
        input.waiting = 0
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
        for input in inputs where !input.hasEnded {
            open = true
            if input.standsAside { continue }
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

    /// Takes an element at `time` (its origin is the current one): false if it is late (behind
    /// the watermark) beyond `allowedLateness`; one within it goes on at once, with `lateTime` set.
    public func take(_ element: Element, at time: Int64, from input: Input) -> Bool {
        take(element, at: time, from: input) { input.deliver(element) }
    }

    /// `take(element, at: time, from: input)` of the element `event` carries: one that goes on at
    /// once goes on in `event` itself, if the input forwards events.
    public func take(_ element: Element, in event: Event<Element>, at time: Int64, from input: Input) -> Bool {
        take(element, at: time, from: input) { input.forward(event) }
    }

    /// Takes `element`; `now` delivers it, for one that goes on at once.
    @inline(__always)
    private func take(_ element: Element, at time: Int64, from input: Input, now: () -> Void) -> Bool {
        if !clock.isStarted {
            if !input.isDriven { input.latest = max(input.latest ?? time, time) }
            // An input (a partition's lane) that has delivered nothing yet holds the start: a
            // partition fetched first must not set a clock the others' elements would be behind.
            guard let allowed else {
                wait(element, at: time, from: input)
                return true
            }
            clock.start(at: min(allowed, earliestWaiting ?? allowed))
        }
        if time < clock.clock {
            guard time >= clock.clock - allowance else { return false }
            late = time
            defer { late = nil }
            now()
            return true
        }
        if !input.isDriven { input.latest = max(input.latest ?? time, time) }
        let wasIdle = input.isIdle
        input.isIdle = false
        input.idleMark = nil
        if input.asTheyCome {
            asItCame = time
            now()
            asItCame = nil
            // A driven input's element (a partition's) moves no watermark: its clock is where
            // `drive` left it, so unless the element left work due by then, or others wait,
            // releasing would find nothing to do (per element, a tenth of a partition's time).
            if input.isDriven, !wasIdle, !anyEnded, waitingCount == 0,
                clock.nextDue ?? .max > clock.clock
            {
                return true
            }
            release()
            return true
        }
        wait(element, at: time, from: input)
        release()
        return true
    }

    /// Keeps an element until the watermark reaches its time.
    private func wait(_ element: Element, at time: Int64, from input: Input) {
        arrivals &+= 1
        let entry = Waiting(time: time, arrival: arrivals, element: element, origin: Origin.current, input: input)
        if time >= inOrderLatest {
            inOrder.append(entry)
            inOrderLatest = time
        } else {
            outOfOrder.push(entry)
        }
        waitingCount += 1
        input.waiting += 1
    }

    /// The time of the earliest element waiting.
    private var earliestWaiting: Int64? {
        let first = head < inOrder.count ? inOrder[head].time : nil
        guard let heapFirst = outOfOrder.withFirst({ $0.time }) else { return first }
        return min(first ?? heapFirst, heapFirst)
    }

    /// Stands in the slots of `inOrder` already delivered.
    private let vacant = Input(maxDelay: 0) { _ in }

    /// The next element to deliver, if its time is at most `limit`: from whichever of the two
    /// holds the earlier. (Entries are compared in place and moved out, not copied: this runs
    /// once per element.)
    private func next(upTo limit: Int64) -> Waiting? {
        let heapFirst = outOfOrder.withFirst { ($0.time, $0.arrival) }
        if head < inOrder.count {
            let time = inOrder[head].time
            let runFirst = heapFirst.map { time != $0.0 ? time < $0.0 : inOrder[head].arrival < $0.1 } ?? true
            if runFirst {
                guard time <= limit else { return nil }
                // The slot stays until compacted; its element and message leave with it.
                var taken = Waiting(time: 0, arrival: 0, element: nil, origin: nil, input: vacant)
                swap(&taken, &inOrder[head])
                head += 1
                waitingCount -= 1
                return taken
            }
        }
        guard let heapFirst, heapFirst.0 <= limit else { return nil }
        waitingCount -= 1
        return outOfOrder.popFirst()
    }

    /// Delivers what the watermark allows, in time order, and moves the clock to it.
    public func release() {
        guard !releasing else { return }
        releasing = true
        defer { releasing = false }
        guard let allowed else { return endInputs() }
        // Most elements go on as they come (or wait): nothing to look for then. (What waits is
        // looked at apart: its types are the element's, and code not specialised for it looks
        // them up on entry.)
        if waitingCount > 0 { deliverWaiting(upTo: allowed) }
        // Every input ended: nothing more can come. The clock then goes on with the run's own
        // (what is still timed — a `delay`'s last elements — comes in its time); running it to
        // the end of time at once would never end a periodic timer.
        // Elements at the watermark itself are still on time: work due then waits for them.
        if allowed != .max { clock.advance(toElementAt: allowed) } else { followRunClock() }
        // Per element: nothing to look at until an input has ended.
        if anyEnded { endInputs() }
    }

    /// Delivers what waits up to `allowed`, in time order, the clock at each element's time.
    private func deliverWaiting(upTo allowed: Int64) {
        if !clock.isStarted, let earliest = earliestWaiting {
            // Held until now by an input that had delivered nothing (it went idle, or ended).
            clock.start(at: min(allowed, earliest))
        }
        while waitingCount > 0, let entry = next(upTo: allowed) {
            entry.input.waiting -= 1
            clock.advance(toElementAt: entry.time)
            // One that came before the clock started, of an input taken as they come.
            if entry.input.asTheyCome { asItCame = entry.time }
            if let element = entry.element { Origin.with(entry.origin) { entry.input.deliver(element) } }
            asItCame = nil
        }
        if head > 1024, head * 2 > inOrder.count { compact() }
    }

    private func compact() {
        inOrder.removeFirst(head)
        head = 0
    }

    /// Ends the inputs that have ended and have nothing waiting.
    private func endInputs() {
        guard anyEnded else { return }
        for input in inputs where input.hasEnded && input.waiting == 0 {
            if let ended = input.ended {
                input.ended = nil
                ended()
            }
        }
    }

    /// The elements of `input` that wait, in time order, for a checkpoint.
    public func waitingElements(of input: Input) -> [(time: Int64, element: Element, origin: Origin?)] {
        if let removed = input.waitingWhenRemoved { return removed }
        let mine = inOrder[head...].filter { $0.input === input } + outOfOrder.elements.filter { $0.input === input }
        return mine.sorted(by: Waiting.before).compactMap { entry in
            entry.element.map { (entry.time, $0, entry.origin) }
        }
    }

    /// A driven input's watermark is now `mark`: what waits up to it goes on, and the clock
    /// follows.
    public func drive(_ input: Input, to mark: Int64) {
        if !clock.isStarted { clock.start(at: mark) }
        guard input.latest != mark else { return }
        input.latest = mark
        release()
    }

    /// `input` has had no element for `quiet` milliseconds of wall time (at least its `idle`): it
    /// no longer holds the watermark back, and its own goes on as if its time had kept going.
    public func idle(_ input: Input, quietFor quiet: Int64) {
        input.isIdle = true
        // An input that has seen nothing on a clock already going (a partition's chain rebuilt
        // after a takeover, its clock restored) goes on from the clock: else it never would.
        let from = input.latest.map { $0 - input.maxDelay } ?? (clock.isStarted ? clock.clock : nil)
        input.idleMark = from.map { $0 + quiet }
        release()
    }

    @exclusivity(unchecked) private var following = false
    @exclusivity(unchecked) private var lookedAgain = false

    /// After the end: the watermark moves on with the run's clock, to each next work due.
    private func followRunClock() {
        guard !following else { return }
        guard let due = clock.nextDue else {
            // Work armed right after the end, in the same turn, is looked for once more at the
            // next: a `sample` subscribes its ticks once its source returned, and a file read
            // while subscribed had ended by then (the run never ended).
            guard !lookedAgain else { return }
            lookedAgain = true
            _ = Origin.with(nil) { clock.base.schedule { [weak self] in self?.followRunClock() } }
            return
        }
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
}
