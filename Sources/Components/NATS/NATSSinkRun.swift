import CNATS
import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// The `nats` sink. JetStream publishes are asynchronous: each keeps its element, the origin
/// of the element and its tries until JetStream answers (on the client's thread, handed to the
/// pipeline's).
final class NATSSink: AsynchronousSink, OriginKeepingSink {
    /// Made when the run starts (`start`), so that a server that refuses it (credentials, a
    /// missing stream) fails the run as it does for the `nats` source: exit 1, not 2.
    private var connection: NATSConnection?
    private let connect: () throws -> NATSConnection
    private let subject: Template
    private let headers: [(key: String, value: Template)]
    private let msgId: Template?
    /// The key and the number of partitions: the subject gains `.P`.
    private let partitioning: (key: Pipeline.Expression, count: Int)?
    private let jetstream: Bool
    private let retries: Int
    private let context: ComponentContext
    private let scope: EvaluationScope
    private let answers: NATSPublishAnswers
    private var pending: [Int: NATSPublish] = [:]
    private var nextKey = 1
    /// Publishes handed to the client and not answered yet; at most `window`.
    private var sent = 0
    private let maxInFlight: Int
    /// How many publishes may be out at once: maxInFlight, halved when one is not answered in
    /// time and grown by one with each answer. A server storing fewer than maxInFlight in
    /// answerWait (one slowed by other clients) would otherwise time every publish out, and
    /// the same ones sent again would keep it as slow: nothing stored for lostAfter.
    private var window: Int
    /// When `window` was last halved: once per answerWait, however many timed out together.
    private var windowHalvedAt: RxTime?
    /// Publishes waiting for room under maxInFlight, in the order they came (handing one more
    /// to a full client would block the pipeline's thread, and fail it after a while), from
    /// `waitingStart` on: taking one from the front moves nothing (an outage queues thousands).
    private var waiting: [Int] = []
    private var waitingStart = 0
    /// Publishes to send again that found no room under `window`, kept in key order: older than
    /// any in `waiting`, they go first (behind the newer ones, the oldest would wait for keys
    /// outside the ordering window, which wait for it: nothing would move). At most maxInFlight.
    private var retrying: [Int] = []
    /// The oldest publish not answered yet (or `nextKey`). None is handed to the client
    /// maxInFlight or more after it: otherwise, while one lost with a server waits out its answer,
    /// the others would go on and the stream would store it far after later elements (an
    /// event-time reader would find it late).
    private var oldestUnanswered = 1
    private var transmittingWaiting = false
    /// How long a publish keeps being tried while the server is away or does not answer.
    private let lostAfter: RxTimeInterval
    /// A stream was checked to store the subject when the run started: "no responders" is then
    /// JetStream not ready yet (a restarting server), not a missing stream.
    private let streamChecked: Bool
    private var ended = false
    private var fail: ((any Error) -> Void)?
    private var finished: (() -> Void)?
    /// Core publishes' origins, let go once a flush after them returned.
    private var flushing: [Origin] = []

    init(
        endpoint: NATSEndpoint, subject: Template, headers: [(key: String, value: Template)], msgId: Template?,
        jetstream: Bool, partitioning: (key: Pipeline.Expression, count: Int)? = nil,
        stream: (name: String, create: Bool)? = nil,
        maxInFlight: Int, retries: Int, context: ComponentContext
    ) throws {
        self.subject = subject
        self.partitioning = partitioning
        self.headers = headers
        self.msgId = msgId
        self.jetstream = jetstream
        self.retries = retries
        self.maxInFlight = maxInFlight
        self.window = maxInFlight
        self.lostAfter = endpoint.lostAfter
        self.streamChecked = stream != nil
        self.context = context
        self.scope = context.makeScope()
        let answers = NATSPublishAnswers()
        self.answers = answers
        connect = Self.connector(
            endpoint: endpoint, subject: subject, partitioned: partitioning != nil, jetstream: jetstream,
            stream: stream, maxInFlight: maxInFlight, answers: answers, context: context)
        restored = context.restoredState
        // The publishes not acknowledged yet: the sources have moved on past their elements.
        let closed = StateBox(Value.null)
        self.closed = closed
        context.keepState { [weak self] in
            guard let self else { return closed.value }
            if !flushing.isEmpty { flushCore() }
            return unacknowledged()
        }
        context.checkpoints?.beforeEachCheckpoint { [weak self] in self?.settlePublishes() }
    }

    /// Before a checkpoint reads the state, JetStream's answers to what is in flight are waited
    /// for (5 s at most), so that the checkpoint holds the messages behind them as done rather
    /// than their publishes as pending. A pending publish is kept in this runner's own state,
    /// while the operator state that made it may move with its partition to another runner, which
    /// would then neither publish it nor make it again.
    private func settlePublishes() {
        guard jetstream, !pending.isEmpty else { return }
        var waited = 0
        while !pending.isEmpty, waited < 500 {
            let arrived = answers.take(waiting: 0.01)
            if arrived.isEmpty { waited += 1 }
            for (key, problem) in arrived { answered(key, problem: problem) }
        }
    }

    /// What the checkpoint the run resumes from kept: published first, once the sink starts.
    private var restored: Value?
    /// What was not acknowledged when the sink closed, for the run's last checkpoint.
    private var closed: StateBox<Value>?

    /// The elements whose publishes JetStream has not acknowledged yet, in the order sent.
    private func unacknowledged() -> Value {
        .array(pending.sorted { $0.key < $1.key }.map(\.value.element))
    }

    func start(failing fail: @escaping (any Error) -> Void) {
        self.fail = fail
        do {
            connection = try connect()
        } catch {
            return fail(error)
        }
        if jetstream { context.meter?.gauge("nats_publish_window", window) }
        if let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler {
            let target = SchedulerBound(self)
            answers.schedule = { answers in
                scheduler.enqueue {
                    for (key, problem) in answers.take() { target.value.answered(key, problem: problem) }
                }
            }
        }
        guard let restored else { return }
        self.restored = nil
        do {
            for element in restored.arrayValue ?? [] { try Origin.with(nil) { try receive(.next(element)) } }
        } catch {
            fail(error)
        }
    }

    func whenFinished(_ done: @escaping () -> Void) {
        if pending.isEmpty { done() } else { finished = done }
    }

    func receive(_ event: Event<Value>) throws {
        guard case .next(let element) = event else {
            ended = true
            if pending.isEmpty, let finished {
                self.finished = nil
                finished()
            }
            return
        }
        guard
            let publish = try context.handling(
                element,
                { () throws -> NATSPublish in
                    var subject = try NATSPublish.text(context.render(self.subject, element, in: scope))
                    if let partitioning {
                        let key = try context.evaluate(partitioning.key, element, in: scope)
                        subject += ".\(PartitionHash.partition(of: key, count: partitioning.count))"
                    }
                    var data: [UInt8] = []
                    if case .string(let text) = element {
                        data = Array(text.utf8)
                    } else {
                        JSONSerializer.write(element, to: &data)
                    }
                    let headers = try self.headers.map { pair in
                        (pair.key, try NATSPublish.text(context.render(pair.value, element, in: scope)))
                    }
                    var id = try msgId.map { try NATSPublish.text(context.render($0, element, in: scope)) }
                    // A result of one JetStream message gets an id of its own derived from it.
                    if id == nil, jetstream, let delivery = Origin.current as? NATSDelivery {
                        id = delivery.derivedMessageID()
                    }
                    return NATSPublish(
                        element: element, subject: subject, data: data, headers: headers, msgId: id,
                        origin: Origin.current, tries: 0)
                })
        else { return }
        try send(publish)
    }

    private func send(_ publish: NATSPublish) throws {
        guard let connection else {
            throw context.error("cannot publish to '\(publish.subject)': not connected to NATS")
        }
        guard jetstream, let js = connection.jetStream else { return try publishCore(publish, on: connection) }
        let key = nextKey
        nextKey += 1
        pending[key] = publish
        transmit(key, js: js)
    }

    /// A core publish: its origin is let go once a flush after it returned.
    private func publishCore(_ publish: NATSPublish, on connection: NATSConnection) throws {
        var (message, status) = publish.message()
        guard let message else {
            throw context.error("cannot publish to '\(publish.subject)': \(NATSError(status, doing: "creating it"))")
        }
        status = natsConnection_PublishMsg(connection.connection, message)
        natsMsg_Destroy(message)
        guard status == NATS_OK else {
            throw context.error("cannot publish to '\(publish.subject)': \(NATSError(status, doing: "core publish"))")
        }
        if let origin = publish.origin {
            flushing.append(origin)
            if flushing.count == 1 {
                Origin.with(nil) { _ = context.scheduler.schedule { [weak self] in self?.flushCore() } }
            }
        }
    }

    /// Hands the publish `key` to the client, or queues it while maxInFlight are out.
    private func transmit(_ key: Int, js: OpaquePointer? = nil) {
        guard let publish = pending[key], let js = js ?? connection?.jetStream else { return }
        guard sent < window, isInWindow(key) else {
            if publish.attempts > 0 {
                // In order as it goes in (answers come in any order), not sorted on every answer.
                let index = retrying.firstIndex { $0 > key } ?? retrying.endIndex
                retrying.insert(key, at: index)
            } else {
                waiting.append(key)
            }
            return
        }
        // lostAfter counts from the first time it is handed to the client, not from a wait in
        // line behind a narrowed window.
        if publish.since == nil { pending[key]?.since = context.scheduler.now }
        var (message, status) = publish.message()
        guard let message else { return failPublish(key, "\(NATSError(status, doing: "creating it"))") }
        answers.expect(message, key: key)
        var owned: OpaquePointer? = message
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        // An answer lost with a server that went away would otherwise be waited for for ever.
        options.MaxWait = Self.answerWait.natsMilliseconds
        status = js_PublishMsgAsync(js, &owned, &options)
        if status == NATS_OK {
            sent += 1
            return
        }
        answers.forget(message)
        if owned != nil { natsMsg_Destroy(message) }
        retry(
            key,
            NATSPublishProblem(
                text: "\(NATSError(status, doing: "JetStream publish"))", status: status, code: jsErrCode(0)))
    }

    /// How long a publish waits for its answer before it is sent again (with msgId, a repeat the
    /// stream already has is dropped).
    static let answerWait: RxTimeInterval = .seconds(5)

    /// Tries the publish `key` again after a wait, or fails it: a timeout or an outage (or
    /// "no responders" with a checked stream: a server still starting) until lostAfter has passed
    /// since it was first sent, an error from the stream `retries` times.
    private func retry(_ key: Int, _ problem: NATSPublishProblem) {
        guard var publish = pending[key] else { return }
        let transient =
            [NATS_TIMEOUT, NATS_CONNECTION_DISCONNECTED, NATS_NOT_YET_CONNECTED, NATS_INSUFFICIENT_BUFFER]
            .contains(problem.status) || (problem.status == NATS_NO_RESPONDERS && streamChecked)
        let elapsed = context.scheduler.now - (publish.since ?? context.scheduler.now)
        if transient ? elapsed > lostAfter : publish.tries >= retries {
            let tries = publish.tries + (transient ? 0 : 1)
            let why =
                transient
                ? "not stored within lostAfter (\(DurationSyntax.approximate(lostAfter))): \(problem.text)"
                : "failed after \(tries) tries: \(problem.text)"
                    + NATSPublish.hint(problem.text, subject: publish.subject)
            return failPublish(key, why)
        }
        if !transient { publish.tries += 1 }
        publish.attempts += 1
        pending[key] = publish
        let wait = RxTimeInterval.milliseconds(min(2000, 100 << min(publish.attempts - 1, 5)))
        Origin.with(nil) {
            _ = context.scheduler.schedule(after: wait) { [weak self] in self?.transmit(key) }
        }
    }

    /// The publish `key` is given up on: an element error, routed by onError.
    private func failPublish(_ key: Int, _ why: String) {
        guard let publish = pending.removeValue(forKey: key) else { return }
        defer { transmitWaiting() }
        // Received but not written: the run's summary counts only what the stream stored.
        context.meter?.count(ComponentMeter.unwrittenCounter)
        Origin.with(publish.origin) {
            do {
                try context.elementFailed(
                    context.error("publish to '\(publish.subject)' \(why)"), element: publish.element)
            } catch {
                fail?(error)
            }
        }
        finishIfDone()
    }

    /// JetStream answered the publish `key`: done, tried again, or failed.
    private func answered(_ key: Int, problem: NATSPublishProblem?) {
        sent -= 1
        if problem?.status == NATS_TIMEOUT {
            narrowWindow()
        } else if problem == nil, window < maxInFlight {
            window += 1
            context.meter?.gauge("nats_publish_window", window)
        }
        if let problem {
            retry(key, problem)
        } else if let publish = pending.removeValue(forKey: key), let origin = publish.origin {
            context.letGo([origin])
        }
        transmitWaiting()
        finishIfDone()
    }

    /// Halves `window` (to 1 at least) for a publish not answered in answerWait, once per
    /// answerWait: the ones sent with it time out together.
    private func narrowWindow() {
        let now = context.scheduler.now
        if let halved = windowHalvedAt, now - halved < Self.answerWait { return }
        windowHalvedAt = now
        window = max(1, window / 2)
        context.meter?.gauge("nats_publish_window", window)
    }

    /// Whether `key` is fewer than maxInFlight publishes after the oldest one not answered.
    private func isInWindow(_ key: Int) -> Bool {
        while oldestUnanswered < nextKey, pending[oldestUnanswered] == nil { oldestUnanswered += 1 }
        return key < oldestUnanswered + maxInFlight
    }

    /// Hands the waiting publishes to the client, in order, as far as there is room (once: a
    /// publish failed on the way calls it again, and the loop already running goes on).
    private func transmitWaiting() {
        guard !transmittingWaiting else { return }
        transmittingWaiting = true
        defer { transmittingWaiting = false }
        // Taken out first: one that finds no room after all goes back in, in order.
        let ready = Array(retrying.prefix(max(0, window - sent)))
        retrying.removeFirst(ready.count)
        for key in ready { transmit(key) }
        while waitingStart < waiting.count, sent < window, isInWindow(waiting[waitingStart]) {
            let key = waiting[waitingStart]
            waitingStart += 1
            transmit(key)
        }
        // What was taken is dropped once it is most of the array (each element moved once).
        if waitingStart > 64 && waitingStart * 2 > waiting.count {
            waiting.removeFirst(waitingStart)
            waitingStart = 0
        }
    }

    private func finishIfDone() {
        if ended && pending.isEmpty, let finished {
            self.finished = nil
            finished()
        }
    }

    /// Core publishes: the server has them once a round trip after them came back.
    private func flushCore() {
        guard let connection else { return }
        let status = natsConnection_FlushTimeout(connection.connection, 5000)
        if status != NATS_OK {
            for origin in flushing { origin.fail(NATSError(status, doing: "flushing to NATS")) }
            fail?(context.error("\(NATSError(status, doing: "flushing to NATS"))"))
        } else {
            context.letGo(flushing)
        }
        flushing = []
    }

    func close() throws {
        if jetstream, let js = connection?.jetStream {
            var options = jsPubOptions()
            jsPubOptions_Init(&options)
            options.MaxWait = 5000
            js_PublishAsyncComplete(js, &options)
            // The answers that came meanwhile would reach the run only after it ended.
            for (key, problem) in answers.take() where problem == nil {
                if let origin = pending.removeValue(forKey: key)?.origin { context.letGo([origin]) }
            }
        }
        closed?.value = unacknowledged()
        if !pending.isEmpty { context.meter?.count(ComponentMeter.unwrittenCounter, by: pending.count) }
        connection?.close()
        connection = nil
        pending.removeAll()
        // They hold the run, which holds this sink.
        fail = nil
        finished = nil
    }
}
