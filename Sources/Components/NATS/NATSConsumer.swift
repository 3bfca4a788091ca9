import CNATS
import Foundation
import Pipeline
import Reactive

/// One message from a durable consumer, as the origin of what it causes: when nothing holds it
/// any more, it is acknowledged, or sent back if something failed or the run was abandoned.
/// A group runner's message names its partition's lane (`EventLanes`).
final class NATSDelivery: LanedOrigin {
    let message: OpaquePointer
    let consumer: NATSConsumer
    /// The message's stream sequence when the run keeps checkpoints (`NATSCoverage`), else 0.
    let sequence: UInt64
    var failure: String?

    init(message: OpaquePointer, consumer: NATSConsumer, sequence: UInt64 = 0, lane: EventLane? = nil) {
        self.message = message
        self.consumer = consumer
        self.sequence = sequence
        super.init(lane: lane)
    }

    /// Set once a checkpoint holding this message's effect acknowledged it.
    private var acknowledged = false
    /// How many results were published with an id derived from this message (pipeline's thread).
    private var results = 0

    /// The id a result of this message is published with when the `nats` sink names none: the
    /// consumer's name and the message's stream sequence, then `:2`, `:3`… for its second and
    /// later results. A redelivered message gives its results the same ids, so JetStream stores
    /// each once (within the output stream's duplicate window). Nil for a consumer without a name.
    func derivedMessageID() -> String? {
        guard let durable = consumer.settings.resultIDName ?? consumer.settings.durable else { return nil }
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return nil }
        let sequence = meta.pointee.Sequence.Stream
        jsMsgMetaData_Destroy(meta)
        results += 1
        return results == 1 ? "\(durable):\(sequence)" : "\(durable):\(sequence):\(results)"
    }

    override func fail(_ error: any Error) {
        if failure == nil { failure = (error as? PipelineRuntimeError)?.message ?? "\(error)" }
    }

    // The checkpoint being taken holds this message's effect: its position counts it.
    override func checkpointing() {
        if failure == nil { consumer.coverage?.cover(sequence) }
    }

    // An operator's state in a committed checkpoint holds the message: acknowledge it now, so a
    // stage that holds many (reduce, buffer) does not wait for the end of the stream.
    override func checkpointed() {
        guard !acknowledged, failure == nil, consumer.coverage?.isAbandoned != true else { return }
        acknowledged = true
        consumer.settle(message, failure: nil, sequence: sequence)
    }

    deinit {
        guard !acknowledged else { return }
        // Under --state a message done is acknowledged once a checkpoint holds what it did to
        // the operators' state (unless the run was abandoned: then it goes back at once).
        if failure == nil, let coverage = consumer.coverage, !consumer.ending.isAbandoned {
            coverage.await(message, sequence: sequence, of: consumer)
        } else {
            consumer.settle(message, failure: failure, sequence: sequence)
        }
    }
}

/// A durable pull consumer and the thread that fetches from it.
final class NATSConsumer: @unchecked Sendable {
    let connection: NATSConnection
    let settings: NATSConsumerSettings
    let ending: RunEnding
    private var subscription: OpaquePointer?
    private let condition = NSCondition()
    private var inFlight = 0
    private var stopped = false
    private var deadLetters: [(OpaquePointer, String)] = []
    /// Set once the connection is closed: a message settled after that is only freed.
    private var closed = false
    /// In a watched run: pending acknowledgements and redeliveries are counted here.
    private let meter: ComponentMeter?
    /// Where lines a user should see go (a dead letter that could not be stored).
    private let report: @Sendable (String) -> Void
    /// Under --state, which of this consumer's messages the checkpoints hold.
    let coverage: NATSCoverage?
    /// Asks the pipeline's thread for a checkpoint before the next one is due.
    private let checkpointSoon: (@Sendable () -> Void)?
    /// When the coverage's floor was last raised to the server's (fetch thread).
    private var floorAskedAt: RxTime?
    /// Whether this run's reader said it skipped a message a checkpoint holds (once is enough).
    private var reportedCovered = false
    /// Whether a dead letter that could not be stored was reported (once a run is enough).
    private var reportedUnstoredDeadLetter = false
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
    private var held = Set<OpaquePointer>()
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
        guard let js = connection.jetStream, let stream = settings.stream, let durable = settings.durable else {
            return
        }
        try NATSStreams.ensure(
            stream, subjects: settings.subject ?? "\(stream).>", create: settings.create, replicas: settings.replicas,
            js: js, endpoint: connection.endpoint.described)
        if let deadLetter = settings.deadLetter {
            try NATSStreams.ensureDeadLetters(
                deadLetter, of: stream, create: settings.create, replicas: settings.replicas, js: js, report: report)
        }
        var code = jsErrCode(rawValue: 0)
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var status = js_GetConsumerInfo(&info, js, stream, durable, nil, &code)
        if settings.restartsFromState {
            // Made already (an earlier try whose answer was lost): this claim's own, as made.
            if status != NATS_OK { try restart(stream: stream, durable: durable, js: js) }
            jsConsumerInfo_Destroy(info)
            try deletePrevious(stream: stream, js: js)
        } else if status == NATS_OK, let info {
            defer { jsConsumerInfo_Destroy(info) }
            let differences = differences(from: info.pointee.Config.pointee)
            if !differences.isEmpty {
                throw NATSSetupError(
                    "consumer '\(durable)' on stream '\(stream)' exists with other settings: \(differences.joined(separator: "; ")); delete it or write the same settings"
                )
            }
            if info.pointee.Config.pointee.MaxDeliver != Self.serverMaxDeliver {
                try updateConsumer(stream: stream, durable: durable, js: js)
            }
        } else if NATSError.isNotFound(status, code) {
            try createConsumer(stream: stream, durable: durable, js: js)
        } else {
            throw NATSError(status, code: code, doing: "cannot read consumer '\(durable)' of stream '\(stream)'")
        }
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        var made: OpaquePointer?
        status = stream.withCString { streamName in
            durable.withCString { consumerName in
                options.Stream = streamName
                options.Consumer = consumerName
                return js_PullSubscribe(&made, js, settings.subject ?? "", durable, nil, &options, &code)
            }
        }
        guard status == NATS_OK else {
            throw NATSError(status, code: code, doing: "cannot subscribe to consumer '\(durable)'")
        }
        subscription = made
    }

    /// The server never stops delivering a message on its own: a message given back unprocessed
    /// (its run failed on another one, or was stopped) counts as delivered there, and a limit on
    /// the server dropped good messages after a few failed runs. `maxDeliver` is counted here,
    /// on failures, where the message is dead-lettered rather than dropped.
    static let serverMaxDeliver: Int64 = -1

    private func consumerConfig(_ body: (inout jsConsumerConfig) -> Void) {
        Self.config(of: settings, body)
    }

    private static func config(of settings: NATSConsumerSettings, _ body: (inout jsConsumerConfig) -> Void) {
        var config = jsConsumerConfig()
        jsConsumerConfig_Init(&config)
        config.AckPolicy = js_AckExplicit
        config.AckWait = settings.ackWait.totalNanoseconds
        config.MaxDeliver = Self.serverMaxDeliver
        config.MaxAckPending = Int64(settings.maxAckPending)
        switch settings.deliver {
        case .all: config.DeliverPolicy = js_DeliverAll
        case .new: config.DeliverPolicy = js_DeliverNew
        case .last: config.DeliverPolicy = js_DeliverLast
        case .sequence(let sequence):
            config.DeliverPolicy = js_DeliverByStartSequence
            config.OptStartSeq = sequence
        case .time(let nanoseconds):
            config.DeliverPolicy = js_DeliverByStartTime
            config.OptStartTime = nanoseconds
        }
        body(&config)
    }

    private func createConsumer(stream: String, durable: String, js: OpaquePointer) throws {
        try putConsumer(stream: stream, durable: durable, js: js, updating: false)
    }

    /// Under --state, unused consumers of a group's partitions (one left by a runner that took
    /// a partition and died before it stored which) are deleted by the server after an hour.
    static let partitionConsumerInactiveThreshold: Int64 = 3_600_000_000_000

    /// Makes the partition's new consumer, delivering from `settings.restartAt`, or from the
    /// acknowledgement floor of the consumer it `replaces` (see `NATSConsumerSettings.restartsFromState`).
    private func restart(stream: String, durable: String, js: OpaquePointer) throws {
        var start = settings.restartAt
        if start == nil, let previous = settings.replaces {
            var code = jsErrCode(rawValue: 0)
            var info: UnsafeMutablePointer<jsConsumerInfo>?
            let status = js_GetConsumerInfo(&info, js, stream, previous, nil, &code)
            defer { jsConsumerInfo_Destroy(info) }
            if status == NATS_OK, let info {
                start = info.pointee.AckFloor.Stream + 1
            } else if !NATSError.isNotFound(status, code) {
                throw NATSError(status, code: code, doing: "cannot read consumer '\(previous)' to read on from it")
            }
        }
        var restarted = self.settings
        if let start { restarted.deliver = .sequence(max(start, 1)) }
        var code = jsErrCode(rawValue: 0)
        var status = NATS_OK
        Self.config(of: restarted) { config in
            config.InactiveThreshold = Self.partitionConsumerInactiveThreshold
            status = durable.withCString { name in
                (restarted.subject ?? "").withCString { filter in
                    config.Durable = name
                    if restarted.subject != nil { config.FilterSubject = filter }
                    var info: UnsafeMutablePointer<jsConsumerInfo>?
                    let status = js_AddConsumer(&info, js, stream, &config, nil, &code)
                    jsConsumerInfo_Destroy(info)
                    return status
                }
            }
        }
        guard status == NATS_OK else {
            throw NATSError(status, code: code, doing: "cannot create consumer '\(durable)' on stream '\(stream)'")
        }
    }

    /// Deletes the consumer the partition was read through before, once its new one is made: a
    /// runner that still reads it (stalled past its lease) finds it gone.
    private func deletePrevious(stream: String, js: OpaquePointer) throws {
        guard let previous = settings.replaces, previous != settings.durable else { return }
        var code = jsErrCode(rawValue: 0)
        let status = js_DeleteConsumer(js, stream, previous, nil, &code)
        guard status == NATS_OK || NATSError.isNotFound(status, code) else {
            throw NATSError(
                status, code: code, doing: "cannot delete consumer '\(previous)' (the partition's last reader's)")
        }
    }

    /// A consumer made by an earlier Rivulet (a limit on deliveries kept by the server) moved to
    /// the server's unlimited one; its other settings are the file's, as checked.
    private func updateConsumer(stream: String, durable: String, js: OpaquePointer) throws {
        try putConsumer(stream: stream, durable: durable, js: js, updating: true)
    }

    /// Creates the consumer with the file's settings, or updates an existing one to them.
    private func putConsumer(stream: String, durable: String, js: OpaquePointer, updating: Bool) throws {
        var code = jsErrCode(rawValue: 0)
        var status = NATS_OK
        consumerConfig { config in
            status = durable.withCString { name in
                (settings.subject ?? "").withCString { filter in
                    config.Durable = name
                    if settings.subject != nil { config.FilterSubject = filter }
                    var info: UnsafeMutablePointer<jsConsumerInfo>?
                    let status =
                        updating
                        ? js_UpdateConsumer(&info, js, stream, &config, nil, &code)
                        : js_AddConsumer(&info, js, stream, &config, nil, &code)
                    jsConsumerInfo_Destroy(info)
                    return status
                }
            }
        }
        guard status == NATS_OK else {
            throw NATSError(
                status, code: code,
                doing: "cannot \(updating ? "update" : "create") consumer '\(durable)' on stream '\(stream)'")
        }
    }

    /// The settings of an existing consumer that differ from the file's, each as "NAME THERE (file: HERE)".
    private func differences(from existing: jsConsumerConfig) -> [String] {
        var found: [String] = []
        func compare(_ name: String, _ there: String, _ here: String) {
            if there != here { found.append("\(name) \(there) (the file: \(here))") }
        }
        compare("ackWait", "\(existing.AckWait / 1_000_000)ms", "\(settings.ackWait.natsMilliseconds)ms")
        // Unlimited on the server is this version's; the file's own limit, an earlier one's.
        if existing.MaxDeliver != Self.serverMaxDeliver {
            compare("maxDeliver", "\(existing.MaxDeliver)", "\(settings.maxDeliver)")
        }
        compare("maxAckPending", "\(existing.MaxAckPending)", "\(settings.maxAckPending)")
        let filter = existing.FilterSubject.map { String(cString: $0) } ?? ""
        compare("subject", filter.isEmpty ? "(all)" : filter, settings.subject ?? "(all)")
        return found
    }

    /// Fetches until stopped, handing each batch to `deliver` (on the I/O thread; it enqueues).
    /// Returns the error that ended it, or nil when stopped.
    /// Set when `fetchLoop` ended because `mayFetch` said no.
    private(set) var stoppedByFence = false
    /// Set when `fetchLoop` ended because deliveries of a partition's consumer under --state
    /// never arrived (their consumer sequences): what came after them was given back.
    private(set) var lostDeliveries: ClosedRange<UInt64>?
    /// The deliveries this reader received, checked for gaps (fetch thread).
    private var deliveryGaps = DeliveryGapCheck()

    func fetchLoop(mayFetch: (() -> Bool)? = nil, deliver: ([OpaquePointer]) -> Void) -> (any Error)? {
        guard let subscription else { return nil }
        while true {
            raiseCoverageFloor()
            condition.lock()
            // A fetch waits for room for a whole batch: one wake-up a batch, not one a message.
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
            }
            if status == NATS_OK {
                condition.lock()
                inFlight += messages.count
                held.formUnion(messages)
                let pending = inFlight
                let stoppedMeanwhile = stopped
                condition.unlock()
                // The run ended during the fetch: what came back now goes back at once, before
                // the connection closes (left alone, each would wait out ackWait).
                if stoppedMeanwhile {
                    for message in messages { giveBack(message) }
                    giveBackQueued()
                    return nil
                }
                measure(messages, pending: pending)
                guard let gap = firstAfterLostDeliveries(messages) else {
                    deliver(messages)
                    continue
                }
                // What came before the gap is in order; the rest goes back, and the partition is
                // read again from its stored state (`NATSReading`).
                if gap.index > 0 { deliver(Array(messages[..<gap.index])) }
                for message in messages[gap.index...] { giveBack(message) }
                lostDeliveries = gap.lost
                giveBackQueued()
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

    /// Under --state, a partition's reader keeps its partition in order: the first of `messages`
    /// after deliveries of its consumer that never reached it (see `DeliveryGapCheck`).
    private func firstAfterLostDeliveries(_ messages: [OpaquePointer]) -> (index: Int, lost: ClosedRange<UInt64>)? {
        guard settings.restartsFromState else { return nil }
        return deliveryGaps.firstAfterLostDeliveries(messages.map(NATSDecoder.consumerSequence(of:)))
    }

    /// Under --state, once a second: raises the coverage's floor to the consumer's
    /// acknowledgement floor on the server, so a checkpoint lists only the sequences above it.
    private func raiseCoverageFloor() {
        guard let coverage, let js = connection.jetStream, let stream = settings.stream,
            let durable = settings.durable
        else { return }
        // Paced by the pipeline's clock, as `keepHeldAlive` is.
        guard let now = pipeline?.now else { return }
        if let asked = floorAskedAt, now - asked < .seconds(1) { return }
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

    /// A message given back without being delivered (the run ended first).
    func giveBack(_ message: OpaquePointer, sequence: UInt64 = 0) {
        condition.lock()
        defer { condition.unlock() }
        for message in [message] + takeCopies(of: sequence) {
            held.remove(message)
            if !closed { natsMsg_Nak(message, nil) }
            natsMsg_Destroy(message)
            inFlight -= 1
        }
    }

    /// Under --state, the stream sequences of the messages being processed, each with the copies
    /// the server delivered again meanwhile (see `admit`).
    private var copies: [UInt64: [OpaquePointer]] = [:]

    /// Whether `message` (stream sequence `sequence`) is to be processed: not when it is a copy
    /// the server delivered again while the first is still being processed here (a message that
    /// waited in the client's queue past ackWait while the fetch loop waited for room). The copy
    /// is settled with the first, never processed twice. Pipeline's thread.
    func admit(_ message: OpaquePointer, sequence: UInt64) -> Bool {
        guard coverage != nil, sequence > 0 else { return true }
        condition.lock()
        defer { condition.unlock() }
        guard copies[sequence] == nil else {
            copies[sequence, default: []].append(message)
            meter?.count("nats_copies_held_total")
            return false
        }
        copies[sequence] = []
        return true
    }

    /// The copies of the message at `sequence` delivered while it was processed, now settled with
    /// it (the lock held).
    private func takeCopies(of sequence: UInt64) -> [OpaquePointer] {
        guard sequence > 0 else { return [] }
        return copies.removeValue(forKey: sequence) ?? []
    }

    /// Acknowledges `message`, or sends it back: at once if the run was abandoned, after
    /// nakDelay if it failed, to the dead-letter subject once it failed maxDeliver times.
    func settle(_ message: OpaquePointer, failure: String?, sequence: UInt64 = 0) {
        condition.lock()
        defer { condition.unlock() }
        // Copies delivered while it was processed go as it goes: acknowledged, or back.
        for copy in takeCopies(of: sequence) {
            held.remove(copy)
            if !closed {
                if failure == nil && !ending.isAbandoned { natsMsg_Ack(copy, nil) } else { natsMsg_Nak(copy, nil) }
            }
            natsMsg_Destroy(copy)
            settled()
        }
        held.remove(message)
        if closed {
            natsMsg_Destroy(message)
            return
        }
        if let failure {
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            var delivered = 1
            if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
                delivered = Int(meta.pointee.NumDelivered)
                jsMsgMetaData_Destroy(meta)
            }
            if delivered >= settings.maxDeliver {
                if settings.deadLetter != nil {
                    // Published (and then acknowledged) by the fetch thread: a JetStream publish waits.
                    deadLetters.append((message, failure))
                    condition.broadcast()
                    return
                }
                natsMsg_Term(message, nil)
            } else {
                natsMsg_NakWithDelay(message, settings.nakDelay.natsMilliseconds, nil)
            }
        } else if ending.isAbandoned {
            // Let go while a failed or stopped run was torn down: not finished, so it goes back.
            natsMsg_Nak(message, nil)
        } else {
            natsMsg_Ack(message, nil)
            if sequence > 0 { coverage?.cover(sequence) }
        }
        natsMsg_Destroy(message)
        settled()
    }

    private func release() {
        condition.lock()
        settled()
        condition.unlock()
    }

    /// The room a fetch waits for.
    private var fetchRoom: Int { min(settings.batch, settings.maxAckPending) }

    /// One message fewer in flight; the fetch loop is woken when a batch fits again (the lock held).
    private func settled() {
        inFlight -= 1
        if settings.maxAckPending - inFlight == fetchRoom { condition.signal() }
    }

    /// Publishes the dead letters settled since the fetch loop last did.
    func publishPendingDeadLetters() {
        condition.lock()
        let letters = deadLetters
        deadLetters = []
        condition.unlock()
        publishDeadLetters(letters)
    }

    private func publishDeadLetters(_ letters: [(OpaquePointer, String)]) {
        guard let js = connection.jetStream, let subject = settings.deadLetter else { return }
        for (message, failure) in letters {
            var copy: OpaquePointer?
            let length = natsMsg_GetDataLength(message)
            natsMsg_Create(&copy, subject, nil, natsMsg_GetData(message), length)
            if let copy {
                natsMsgHeader_Set(copy, "Rivulet-Error", String(failure.prefix(1000)).replacing("\n", with: " "))
                natsMsgHeader_Set(copy, "Rivulet-Subject", natsMsg_GetSubject(message))
                var code = jsErrCode(rawValue: 0)
                var ack: UnsafeMutablePointer<jsPubAck>?
                let status = js_PublishMsg(&ack, js, copy, nil, &code)
                jsPubAck_Destroy(ack)
                natsMsg_Destroy(copy)
                // Not stored: leave the message to come back rather than lose it, and say so once
                // (without a stream for the subject, every such message comes back for ever).
                if status != NATS_OK {
                    if !reportedUnstoredDeadLetter {
                        reportedUnstoredDeadLetter = true
                        report(
                            "cannot store a dead letter on '\(subject)' (\(NATSError(status, code: code, doing: "publishing it"))); "
                                + "the message goes back and comes again: create a stream that stores '\(subject)'")
                    }
                    natsMsg_Nak(message, nil)
                    natsMsg_Destroy(message)
                    release()
                    continue
                }
            }
            natsMsg_Term(message, nil)
            natsMsg_Destroy(message)
            release()
        }
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

/// A setup problem worth its own sentence (a missing stream, a consumer with other settings).
struct NATSSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
extension NATSConsumer {
    var hasInFlight: Bool {
        condition.lock()
        defer { condition.unlock() }
        return inFlight > 0
    }
}
