/// One input of a source that is read in order on its own, beside others read at their own pace:
/// a partition of a `nats` group runner. `eventTime` keeps a watermark per lane (Flink's minimum
/// over input partitions), so a partition read ahead of the others does not make theirs late.
@_spi(Components) public final class EventLane {
    /// The partition it reads (for what a user sees).
    public let number: Int
    /// The source's lanes; weak, since the source keeps its open lanes.
    public private(set) weak var lanes: EventLanes?

    /// Lane `number` of `lanes`.
    public init(number: Int, lanes: EventLanes) {
        self.number = number
        self.lanes = lanes
    }
}

/// The lanes of one source, opened and closed on the pipeline's thread in order with the
/// elements: a lane opens before its first element and closes after its last. `eventTime` takes a
/// lane's elements as one input from the moment the lane opens, so a partition that has not
/// delivered yet holds the watermark back (until it does, closes, or is idle).
@_spi(Components) public final class EventLanes {
    /// The lanes open now, oldest first.
    public private(set) var open: [EventLane] = []
    private var watchers: [Int: (EventLane, _ isOpen: Bool) -> Void] = [:]
    private var nextWatcher = 0

    /// A source's lanes, none open yet.
    public init() {}

    /// `lane` delivers from now on.
    public func opened(_ lane: EventLane) {
        open.append(lane)
        for watcher in watchers.values { watcher(lane, true) }
    }

    /// `lane` delivers no more (its partition was handed over, lost, or the run drained).
    public func closed(_ lane: EventLane) {
        guard open.contains(where: { $0 === lane }) else { return }
        open.removeAll { $0 === lane }
        for watcher in watchers.values { watcher(lane, false) }
    }

    /// Calls `watcher` for every lane that opens or closes, until the returned key is passed to
    /// `unwatch`.
    func watch(_ watcher: @escaping (EventLane, _ isOpen: Bool) -> Void) -> Int {
        nextWatcher += 1
        watchers[nextWatcher] = watcher
        return nextWatcher
    }

    func unwatch(_ key: Int) { watchers[key] = nil }
}

/// An origin that names the lane its element came by.
@_spi(Components) open class LanedOrigin: Origin {
    /// Nil for a source without lanes.
    public let lane: EventLane?

    /// An origin naming `lane`.
    public init(lane: EventLane?) {
        self.lane = lane
    }
}

/// The inputs one `eventTime` subscription gives the domain: its own, for elements that came by
/// no lane, and one per open lane of the sources it has seen elements from.
@_spi(Components) public final class EventTimeInputs<Element> {
    /// One input of the domain.
    public typealias Input = EventTimeDomain<Element>.Input
    let domain: EventTimeDomain<Element>
    /// For elements without a lane; once lanes are seen it holds the watermark only if such an
    /// element came.
    let base: Input
    private let makeInput: () -> Input
    /// Called with each lane input made (to arm its idle timer) and when one leaves.
    private let madeLaneInput: (Input) -> Void
    private let laneInputLeft: (Input) -> Void
    private(set) var byLane: [ObjectIdentifier: Input] = [:]
    private var watched: [(EventLanes, Int)] = []
    private var baseTookOwn = false
    /// Whether only the lanes this subscription gets elements from are inputs (a group's
    /// partition chain gets its own lane's elements only, `SeenLanesOnly`).
    private let seenLanesOnly: Bool

    init(
        domain: EventTimeDomain<Element>, base: Input, makeInput: @escaping () -> Input,
        madeLaneInput: @escaping (Input) -> Void,
        laneInputLeft: @escaping (Input) -> Void, seenLanesOnly: Bool = false
    ) {
        self.seenLanesOnly = seenLanesOnly
        self.domain = domain
        self.base = base
        self.makeInput = makeInput
        self.madeLaneInput = madeLaneInput
        self.laneInputLeft = laneInputLeft
    }

    /// Every input of this subscription, its own first.
    public var all: [Input] { [base] + byLane.values.sorted { $0.order < $1.order } }

    /// `body` with the input an element with the current origin goes to. The stream's own (most
    /// elements) is lent, held by this object: returned, it was retained and released for every
    /// element, and the release waited on the stores before it (atomic).
    @inline(__always)
    func withInput<Result>(_ body: (Input) throws -> Result) rethrows -> Result {
        guard let origin = Origin.current, let laned = origin as? LanedOrigin, let lane = laned.lane else {
            if !baseTookOwn { tookOwn() }
            return try body(base)
        }
        return try body(byLane[ObjectIdentifier(lane)] ?? firstOf(lane))
    }

    private func tookOwn() {
        baseTookOwn = true
        base.standsAside = false
    }

    /// An element of a lane not seen yet: from now on every open lane of its source is an input.
    private func firstOf(_ lane: EventLane) -> Input {
        if let lanes = lane.lanes, !watched.contains(where: { $0.0 === lanes }) {
            if !baseTookOwn { base.standsAside = true }
            let key = lanes.watch { [unowned self] lane, isOpen in
                if isOpen {
                    if !seenLanesOnly { add(lane) }
                } else {
                    close(lane)
                }
            }
            watched.append((lanes, key))
            if !seenLanesOnly {
                for open in lanes.open where byLane[ObjectIdentifier(open)] == nil { add(open) }
            }
        }
        return byLane[ObjectIdentifier(lane)] ?? add(lane)
    }

    private var made = 0

    @discardableResult
    private func add(_ lane: EventLane) -> Input {
        let input = makeInput()
        made += 1
        input.order = made
        input.lane = lane.number
        // A lane's input ends when its lane closes; once nothing of it waits, it leaves the domain.
        input.ended = { [unowned self, unowned input] in
            byLane[ObjectIdentifier(lane)] = nil
            domain.remove(input)
            laneInputLeft(input)
        }
        byLane[ObjectIdentifier(lane)] = input
        domain.add(input)
        madeLaneInput(input)
        return input
    }

    private func close(_ lane: EventLane) {
        guard let input = byLane[ObjectIdentifier(lane)] else { return }
        domain.end(input)
    }

    /// The source ended: so did every lane (what waits then goes on before the stream ends).
    func endLanes() {
        for input in byLane.values where !input.hasEnded { domain.end(input) }
    }

    /// The subscription is over: the lanes' inputs leave the domain (what waited in them stays
    /// in `all`, for the run's last checkpoint) and no lane is watched.
    func remove() {
        for (lanes, key) in watched { lanes.unwatch(key) }
        watched = []
        for input in byLane.values { domain.remove(input) }
    }
}
