import CNATS
import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

final class NATSConsumer: @unchecked Sendable {
    let connection: NATSConnection
    let settings: NATSConsumerSettings
    let ending: RunEnding
    private var subscription: OpaquePointer?
    let condition = NSCondition()
    var inFlight = 0
    var stopped = false
    var deadLetters: [(OpaquePointer, String)] = []
    /// Set once the connection is closed: a message settled after that is only freed.
    var closed = false
    /// In a watched run: pending acknowledgements and redeliveries are counted here.
    let meter: ComponentMeter?
    /// Where lines a user should see go (a dead letter that could not be stored).
    let report: @Sendable (String) -> Void
    /// Under --state, which of this consumer's messages the checkpoints hold.
    let coverage: NATSCoverage?
    /// Asks the pipeline's thread for a checkpoint before the next one is due.
    private let checkpointSoon: (@Sendable () -> Void)?
    /// When the coverage's floor was last raised to the server's (fetch thread).
    private var floorAskedAt: RxTime?
    /// How many sequences a checkpoint may list above the floor before the server is asked for
    /// the floor sooner than every 10 s.
    static let floorAskedAtListed = 2000
    /// Whether the last fetch got fewer messages than it asked for: none wait behind them, and
    /// counting them is cheap (fetch thread).
    private var lastFetchCameShort = true
    /// Whether this run's reader said it skipped a message a checkpoint holds (once is enough).
    private var reportedCovered = false
    /// Whether a dead letter that could not be stored was reported (once a run is enough).
    var reportedUnstoredDeadLetter = false
    /// Whether a pull request was sent: one may still be waiting on the server (see
    /// `letTheLastRequestLapse`). A fetch that got its whole batch does not show that none does:
    /// libnats ends a fetch at the timeout status of an earlier request, whose own request then
    /// goes on waiting, and a later fetch may be served by either.
    private var requestsSent = false
    /// How long a fetch waits for its batch, in milliseconds; its pull request expires on the
    /// server at most this long after the server received it.
    static let fetchWait: Int64 = 500
    /// The messages fetched and not yet settled, said to be in progress while the pipeline holds
    /// them (`keepHeldAlive`).
    var held = Set<OpaquePointer>()
    /// The pipeline's thread, whose clock paces `keepHeldAlive` and whose answers vouch for it.
    private let pipeline: (any ConcurrentDeliveryScheduler)?
    /// When the held messages were last said to be in progress (the pipeline's clock).
    private var keptAliveAt: RxTime?
    /// Whether the pipeline's thread ran what `keepHeldAlive` last enqueued.
    private var pipelineAnswered = true

    init(
        connection: NATSConnection, settings: NATSConsumerSettings, ending: RunEnding, meter: ComponentMeter? = nil,
        pipeline: (any ConcurrentDeliveryScheduler)? = nil, coverage: NATSCoverage? = nil,
        checkpointSoon: (@Sendable () -> Void)? = nil, report: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.coverage = coverage
        self.checkpointSoon = checkpointSoon
        self.connection = connection
        self.settings = settings
        self.ending = ending
        self.meter = meter
        self.pipeline = pipeline
        self.report = report
    }

    /// Says every held message is still in progress (JetStream's `+WPI`, which starts its
    /// ackWait again), every third of ackWait, while the pipeline's thread keeps answering. A
    /// message an operator holds past ackWait (a window waiting for its end, a slow sink) was
    /// otherwise delivered again while its first copy was held, and counted twice. A pipeline
    /// whose thread did not run what was enqueued a third of ackWait before is not vouched for:
    /// its messages go to another runner after ackWait, as a dead runner's do. The lock is held.
    private func keepHeldAliveLocked() {
        guard let pipeline, !closed else { return }
        let now = pipeline.now
        guard let last = keptAliveAt else {
            keptAliveAt = now
            return
        }
        guard now - last >= settings.ackWait / 3 else { return }
        keptAliveAt = now
        let answered = pipelineAnswered
        pipelineAnswered = false
        pipeline.enqueue { [self] in condition.withLock { pipelineAnswered = true } }
        guard answered else { return }
        for message in held { natsMsg_InProgress(message, nil) }
    }

    /// `keepHeldAliveLocked`, taking the lock (the fetch thread, between fetches and while it
    /// waits for the last messages to be settled).
    func keepHeldAlive() {
        condition.lock()
        keepHeldAliveLocked()
        condition.unlock()
    }

    /// A watched run's view of a fetched batch: how many were delivered before, and what is pending.
    private func measure(_ messages: [OpaquePointer], pending: Int) {
        guard let meter else { return }
        var redelivered = 0
        for message in messages {
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
                if meta.pointee.NumDelivered > 1 { redelivered += 1 }
                jsMsgMetaData_Destroy(meta)
            }
        }
        if redelivered > 0 { meter.count("nats_redeliveries_total", by: redelivered) }
        gaugePending(pending)
    }

    /// `nats_pending_acks`: one gauge a consumer, so a group's partitions each show their own.
    private func gaugePending(_ pending: Int) {
        if let partition = settings.partition {
            meter?.gauge("nats_pending_acks", label: ("partition", String(partition)), pending)
        } else {
            meter?.gauge("nats_pending_acks", pending)
        }
    }

    /// Checks the stream (creating it if the file asks), creates or checks the consumer, and
    /// binds a pull subscription to it.
    func open() throws {
        subscription = try NATSConsumerSetup(settings: settings, connection: connection, report: report).subscribe()
    }

    /// Under --state, the stream sequences of the messages being processed, each with the copies
    /// the server delivered again meanwhile (see `admit`).
    var copies: [UInt64: [OpaquePointer]] = [:]

    /// Set when `fetchLoop` ended because `mayFetch` said no.
    private(set) var stoppedByFence = false
    /// Set when `fetchLoop` ended because deliveries of a partition's consumer under --state
    /// never arrived (their consumer sequences): what came after them was given back.
    private(set) var lostDeliveries: ClosedRange<UInt64>?
    /// The deliveries this reader received, checked for gaps (fetch thread).
    private var deliveryGaps = DeliveryGapCheck()

    /// Fetches until stopped, handing each batch to `deliver` (on the I/O thread; it enqueues).
    /// Returns the error that ended it, or nil when stopped.
    func fetchLoop(mayFetch: (() -> Bool)? = nil, deliver: ([OpaquePointer]) -> Void) -> (any Error)? {
        guard let subscription else { return nil }
        while true {
            raiseCoverageFloor()
            let (room, isStopped) = waitForRoom()
            if isStopped {
                giveBackQueued()
                return nil
            }
            // A partition whose lease is not vouched for is not fetched: a runner that stalled
            // past its lease would otherwise take, and give back, messages of the consumer its new
            // holder reads, which then come to that holder behind later ones.
            if let mayFetch, !mayFetch() {
                stoppedByFence = true
                giveBackQueued()
                return nil
            }
            if room < fetchRoom { continue }
            var list = natsMsgList()
            var code = jsErrCode(rawValue: 0)
            // What is queued goes first, taken without a pull request: libnats 3.4's fetch
            // writes past its array when more than half a batch is queued when it starts (what an
            // earlier pull request delivered after its fetch had returned) and more comes.
            var messages = takeQueued(from: subscription, atMost: min(settings.batch, room))
            var status = NATS_OK
            if messages.isEmpty {
                // While the client reconnects, a pull request would only wait in its buffer: wait here.
                let connected = natsConnection_Status(connection.connection) == NATS_CONN_STATUS_CONNECTED
                let wanted = min(settings.batch, room)
                status =
                    connected
                    ? natsSubscription_Fetch(&list, subscription, Int32(wanted), Self.fetchWait, &code)
                    : NATS_CONNECTION_DISCONNECTED
                if status == NATS_OK { messages = Self.take(&list) }
                if connected { requestsSent = true }
                lastFetchCameShort = messages.count < wanted
            }
            if status == NATS_OK {
                if handOn(messages, to: deliver) { continue }
                return nil
            }
            if let down = connection.downFor, down > connection.endpoint.lostAfter {
                return NATSSetupError(
                    "the NATS server at \(connection.endpoint.described) was unreachable for \(down.components.seconds)s; giving up (lostAfter)"
                )
            }
            if status != NATS_TIMEOUT {
                // Disconnected, or the server is restarting: wait a little without spinning.
                condition.lock()
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1))
                condition.unlock()
            }
        }
    }

    /// Waits until a whole batch fits under maxAckPending (one wake-up a batch, not one a
    /// message), the consumer is stopped, or dead letters wait to be published (they are, here).
    /// Returns the room for a fetch and whether it was stopped.
    private func waitForRoom() -> (room: Int, stopped: Bool) {
        condition.lock()
        keepHeldAliveLocked()
        while settings.maxAckPending - inFlight < fetchRoom && !stopped && deadLetters.isEmpty {
            // What waits for a checkpoint to be acknowledged need not wait for its interval.
            if let coverage, let checkpointSoon, coverage.waiting > 0 { checkpointSoon() }
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.2))
            keepHeldAliveLocked()
        }
        let letters = deadLetters
        deadLetters = []
        let room = settings.maxAckPending - inFlight
        let pending = inFlight
        let isStopped = stopped
        condition.unlock()
        gaugePending(pending)
        publishDeadLetters(letters)
        return (room, isStopped)
    }

    /// Hands a fetched batch to `deliver`, counted in flight; false when fetching must end: the
    /// run stopped during the fetch (the batch goes back at once, before the connection closes,
    /// rather than wait out ackWait), or deliveries before some of it never arrived.
    private func handOn(_ messages: [OpaquePointer], to deliver: ([OpaquePointer]) -> Void) -> Bool {
        condition.lock()
        inFlight += messages.count
        held.formUnion(messages)
        let pending = inFlight
        let stoppedMeanwhile = stopped
        condition.unlock()
        if stoppedMeanwhile {
            for message in messages { giveBack(message) }
            giveBackQueued()
            return false
        }
        measure(messages, pending: pending)
        guard let gap = firstAfterLostDeliveries(messages) else {
            deliver(messages)
            return true
        }
        // What came before the gap is in order; the rest goes back, and the partition is read
        // again from its stored state (`NATSReading`).
        if gap.index > 0 { deliver(Array(messages[..<gap.index])) }
        for message in messages[gap.index...] { giveBack(message) }
        lostDeliveries = gap.lost
        giveBackQueued()
        return false
    }

    /// Under --state, a partition's reader keeps its partition in order: the first of `messages`
    /// after deliveries of its consumer that never reached it (see `DeliveryGapCheck`).
    private func firstAfterLostDeliveries(_ messages: [OpaquePointer]) -> (index: Int, lost: ClosedRange<UInt64>)? {
        guard settings.restartsFromState else { return nil }
        return deliveryGaps.firstAfterLostDeliveries(messages.map(NATSDecoder.consumerSequence(of:)))
    }

    /// Under --state: raises the coverage's floor to the consumer's acknowledgement floor on the
    /// server, so a checkpoint lists only the sequences above it. Asked at most once a second,
    /// and while messages wait to be read only once the list holds `floorAskedAtListed`
    /// sequences or every 10 s: nats-server before 2.9.15 answers a consumer-info request by
    /// counting the consumer's pending messages through the stream, holding the block a producer
    /// appends to, and twelve partitions behind a producer asking every second slowed it to
    /// 30 messages a second.
    private func raiseCoverageFloor() {
        guard let coverage, let js = connection.jetStream, let stream = settings.stream,
            let durable = settings.durable
        else { return }
        // Paced by the pipeline's clock, as `keepHeldAlive` is.
        guard let now = pipeline?.now else { return }
        if let asked = floorAskedAt {
            let since = now - asked
            let behind = !lastFetchCameShort && since < .seconds(10) && coverage.listed < Self.floorAskedAtListed
            if since < .seconds(1) || behind { return }
        }
        floorAskedAt = now
        var code = jsErrCode(rawValue: 0)
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = 2_000
        guard js_GetConsumerInfo(&info, js, stream, durable, &options, &code) == NATS_OK, let info else { return }
        coverage.raiseFloor(to: info.pointee.AckFloor.Stream)
        jsConsumerInfo_Destroy(info)
    }

    /// Whether a checkpoint the run resumed from holds `message`'s effect: then it is
    /// acknowledged here, not processed again (its acknowledgement was lost). The fetch thread
    /// or the pipeline's; says so once.
    func isCovered(_ sequence: UInt64) -> Bool {
        guard let coverage, sequence > 0, coverage.contains(sequence) else { return false }
        let first = condition.withLock {
            defer { reportedCovered = true }
            return !reportedCovered
        }
        meter?.count("nats_covered_redeliveries_total")
        if first {
            report(
                "a message delivered again (stream sequence \(sequence)) is held by a checkpoint already: acknowledged, not processed twice"
            )
        }
        return true
    }

    /// Gives back what reached the subscription after its last fetch returned: a fetch that timed
    /// out just before its messages came in (as when the runner was stopped by SIGSTOP) leaves
    /// them queued, and left alone each would wait out ackWait.
    func giveBackQueued() {
        guard let subscription else { return }
        while true {
            let messages = takeQueued(from: subscription, atMost: max(settings.batch, 1))
            if messages.isEmpty { return }
            condition.lock()
            inFlight += messages.count
            condition.unlock()
            for message in messages { giveBack(message) }
        }
    }

    /// Waits, once fetching stopped and before the subscription closes, until no pull request
    /// can deliver any more, and gives back what they deliver meanwhile. A fetch returns at its
    /// own deadline, but the server ends its request up to `fetchWait` after it *received* it,
    /// later when the request waited on a slow link or in a busy client's or server's queue; a
    /// message delivered after the subscription closed is lost to the consumer until ackWait
    /// (30 s). So a partition handed over, lost or fenced reaches its next reader at once and in
    /// order, and a stopped runner's last messages reach the others of its consumer at once.
    /// Without a connection there is nothing to wait for: the server ended the requests with it.
    func letTheLastRequestLapse() {
        let connection = connection.connection
        guard requestsSent, natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED else {
            requestsSent = false
            return giveBackQueued()
        }
        // Every request reached the server before the answer to this flush did: none can deliver
        // later than `fetchWait` from now.
        _ = natsConnection_FlushTimeout(connection, 2_000)
        let lapsed = Date(timeIntervalSinceNow: Double(Self.fetchWait) / 1_000)
        while Date() < lapsed {
            giveBackQueued()
            condition.lock()
            _ = condition.wait(until: min(lapsed, Date(timeIntervalSinceNow: 0.05)))
            condition.unlock()
        }
        // What they delivered before they lapsed has arrived once this flush is answered.
        _ = natsConnection_FlushTimeout(connection, 2_000)
        giveBackQueued()
        requestsSent = false
    }

    /// Up to `limit` messages already queued in the subscription, taken without a pull request:
    /// a fetch that expires in 1 ns takes what is queued and times out before it would send one.
    private func takeQueued(from subscription: OpaquePointer, atMost limit: Int) -> [OpaquePointer] {
        var queued: Int32 = 0
        guard natsSubscription_GetPending(subscription, &queued, nil) == NATS_OK, queued > 0 else { return [] }
        var request = jsFetchRequest()
        jsFetchRequest_Init(&request)
        request.Batch = Int32(max(limit, 1))
        request.Expires = 1
        var list = natsMsgList()
        guard natsSubscription_FetchRequest(&list, subscription, &request) == NATS_OK else { return [] }
        return Self.take(&list)
    }

    /// The messages of a fetched list, now the caller's; the list is freed.
    private static func take(_ list: inout natsMsgList) -> [OpaquePointer] {
        var messages: [OpaquePointer] = []
        messages.reserveCapacity(Int(list.Count))
        for index in 0..<Int(list.Count) {
            if let message = list.Msgs[index] {
                messages.append(message)
                list.Msgs[index] = nil
            }
        }
        natsMsgList_Destroy(&list)
        return messages
    }

    /// Stops fetching; the loop returns within a fetch's wait.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    func close() {
        // Done after the run's last checkpoint, so no checkpoint holds them: they come again.
        coverage?.giveBack(of: self)
        condition.lock()
        closed = true
        condition.unlock()
        if let subscription {
            natsSubscription_Destroy(subscription)
            self.subscription = nil
        }
    }
}

extension NATSConsumer {
    var hasInFlight: Bool {
        condition.lock()
        defer { condition.unlock() }
        return inFlight > 0
    }
}
