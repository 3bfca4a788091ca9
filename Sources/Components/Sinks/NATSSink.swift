import CNATS
import Foundation
@_spi(Host) import Pipeline
import Reactive

private enum Key {
    static let subject = Parameter<Template>(
        "subject", doc: "The subject each element is published to; a template over it.",
        example: "\"orders.{{ .region }}\"")
    static let headers = Parameter<ParameterMap<Template>?>(
        "headers", doc: "Message headers (templates).", example: "{ Source: rivulet }")
    static let msgId = Parameter<Template?>(
        "msgId",
        doc:
            "A template sent as Nats-Msg-Id: JetStream drops a second publish with the same id (within the stream's duplicate window), so a retry or a redelivered input is stored once.",
        example: "\"{{ .id }}\"")
    static let jetstream = Parameter<Bool>(
        "jetstream", default: true,
        doc: "Publish to JetStream and wait for its acknowledgement (false: core NATS, fire and forget).")
    static let maxInFlight = Parameter<Int>(
        "maxInFlight", default: 1000, doc: "Publishes awaiting JetStream's acknowledgement at most."
    ).atLeast(1)
    static let stream = Parameter<String?>(
        "stream",
        doc:
            "The JetStream stream the subject is stored in, checked when the run starts (a missing one is an error naming it, unless create).",
        example: "INVOICES")
    static let create = Parameter<Bool>(
        "create", default: false,
        doc:
            "Create stream when it does not exist (file storage), storing the subject with each templated token as * (invoices.{{ .customer }} stores invoices.*)."
    )
    static let retries = Parameter<Int>(
        "retries", default: 5, doc: "How often a publish JetStream did not acknowledge is tried again."
    ).atLeast(0)
}

extension BuiltinComponents {
    /// `nats: {subject}` (a sink) — publishes elements to NATS.
    public static let natsSink = ComponentSpec(
        name: "nats",
        summary: "Publishes each element (as JSON, a string as its text) to a NATS subject, JetStream-acknowledged.",
        docs: """
            With jetstream (the default) every publish waits for the stream's acknowledgement, with at \
            most maxInFlight outstanding; one that is not acknowledged (a timeout, a server going \
            away) is tried again up to retries times, then fails the run (or is handled by onError). \
            A message from a durable nats source is acknowledged only after the publishes it caused \
            were. With msgId, JetStream stores each id once, so a retried publish or a redelivered \
            input is not stored twice: exactly-once into the stream within its duplicate window, \
            at-least-once otherwise. With jetstream: false the publish is core NATS: at-most-once, \
            flushed to the server before its input is acknowledged. JetStream stores a subject only \
            if a stream does: name it with stream (and create: true to create it at start); a publish \
            no stream takes fails with an error that says so.
            """,
        parameters: [
            Key.subject, Key.headers, Key.msgId, Key.jetstream, Key.stream, Key.create, Key.maxInFlight, Key.retries,
        ]
            + NATSParameters.connection,
        primary: Key.subject,
        example:
            "sink: { nats: { subject: \"invoices.{{ .region }}\", msgId: \"{{ .id }}\", stream: INVOICES, create: true } }",
        validate: { values, validation in
            if values[Key.create] && values[Key.stream] == nil {
                validation.error("create needs stream: the name of the stream to create", at: Key.create, in: values)
            }
            if values[Key.stream] != nil && !values[Key.jetstream] {
                validation.error(
                    "stream needs jetstream: true (core NATS publishes are not stored)", at: Key.stream, in: values)
            }
            NATSParameters.validate(values, validation)
        },
        checkpointing: .restartsWork(
            "the JetStream publishes not acknowledged at the last checkpoint (kept in it, published again on "
                + "restart: with msgId JetStream drops the repeats); core publishes are flushed to the server first"),
        delivery: Delivery(
            .atLeastOnce,
            "JetStream publishes wait for the stream's acknowledgement; with msgId exactly-once into the stream within its duplicate window; with jetstream: false at-most-once"
        ),
        elementErrors: true,
        factory: .sink { parameters, context in
            try NATSSink(
                endpoint: NATSParameters.endpoint(parameters, context: context), subject: parameters[Key.subject],
                headers: parameters[Key.headers]?.pairs ?? [], msgId: parameters[Key.msgId],
                jetstream: parameters[Key.jetstream],
                stream: parameters[Key.stream].map { ($0, parameters[Key.create]) },
                maxInFlight: parameters[Key.maxInFlight], retries: parameters[Key.retries], context: context)
        })
}

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
    private let jetstream: Bool
    private let retries: Int
    private let context: ComponentContext
    private let scope: EvaluationScope
    private let answers: Answers
    private var pending: [Int: Pending] = [:]
    private var nextKey = 1
    private var ended = false
    private var fail: ((any Error) -> Void)?
    private var finished: (() -> Void)?
    /// Core publishes' origins, let go once a flush after them returned.
    private var flushing: [Origin] = []

    private struct Pending {
        let element: Value
        let subject: String
        let data: [UInt8]
        let headers: [(String, String)]
        let msgId: String?
        let origin: Origin?
        var tries: Int
    }

    /// JetStream's answers, matched to publishes by the key kept in a header-less map: the C
    /// client hands back the message it published, whose pointer is the key. Answers that arrive
    /// together reach the run in one action: one wake-up of its thread a burst, not one an answer.
    final class Answers: PublishAckSink, @unchecked Sendable {
        private let lock = NSLock()
        private var keys: [OpaquePointer: Int] = [:]
        private var arrived: [(key: Int, problem: String?)] = []
        /// Schedules the hand-over of what arrived (set once the sink has started; given the
        /// answers rather than holding them, so that they do not hold themselves).
        var schedule: (@Sendable (Answers) -> Void)?

        func expect(_ message: OpaquePointer, key: Int) { lock.withLock { keys[message] = key } }
        func forget(_ message: OpaquePointer) { lock.withLock { keys[message] = nil } }

        override func answered(_ message: OpaquePointer?, failure: (natsStatus, jsErrCode)?) {
            let problem = failure.map { NATSError($0.0, code: $0.1, doing: "not stored").description }
            let first: Bool? = lock.withLock {
                guard let message, let key = keys.removeValue(forKey: message) else { return nil }
                arrived.append((key, problem))
                return arrived.count == 1
            }
            if first == true { schedule?(self) }
        }

        /// What arrived since the last call.
        func take() -> [(key: Int, problem: String?)] {
            lock.withLock {
                defer { arrived = [] }
                return arrived
            }
        }
    }

    init(
        endpoint: NATSEndpoint, subject: Template, headers: [(key: String, value: Template)], msgId: Template?,
        jetstream: Bool, stream: (name: String, create: Bool)? = nil, maxInFlight: Int, retries: Int,
        context: ComponentContext
    ) throws {
        self.subject = subject
        self.headers = headers
        self.msgId = msgId
        self.jetstream = jetstream
        self.retries = retries
        self.context = context
        self.scope = context.makeScope()
        let answers = Answers()
        self.answers = answers
        let log = SchedulerBound({ (line: String) in context.log(line, level: .warning) })
        let name = context.componentName
        let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler
        connect = {
            let connection: NATSConnection
            do {
                connection = try NATSConnection(
                    endpoint, name: "rivulet \(name)", publishAcks: jetstream ? answers : nil, maxPending: maxInFlight,
                    report: { line in scheduler?.enqueue { log.value("\(name): \(line)") } })
            } catch {
                throw context.error(Secrets.shared.redact("\(error)"))
            }
            if let stream, let js = connection.jetStream {
                do {
                    try NATSStreams.ensure(
                        stream.name, subjects: NATSStreams.subjects(storing: subject.source), create: stream.create,
                        replicas: 1, js: js, endpoint: endpoint.described)
                } catch {
                    connection.close()
                    throw context.error(Secrets.shared.redact("\(error)"))
                }
            }
            return connection
        }
        restored = context.restoredState
        // The publishes not acknowledged yet: the sources have moved on past their elements.
        let closed = StateBox(Value.null)
        self.closed = closed
        context.keepState { [weak self] in
            guard let self else { return closed.value }
            if !flushing.isEmpty { flushCore() }
            return unacknowledged()
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
                { () throws -> Pending in
                    let subject = try context.render(self.subject, element, in: scope)
                    var data: [UInt8] = []
                    if case .string(let text) = element {
                        data = Array(text.utf8)
                    } else {
                        JSONSerializer.write(element, to: &data)
                    }
                    let headers = try self.headers.map { pair in
                        (pair.key, try Self.text(context.render(pair.value, element, in: scope)))
                    }
                    let id = try msgId.map { try Self.text(context.render($0, element, in: scope)) }
                    return Pending(
                        element: element, subject: Self.text(subject), data: data, headers: headers, msgId: id,
                        origin: Origin.current, tries: 0)
                })
        else { return }
        try send(publish)
    }

    private static func text(_ value: Value) -> String { value.stringValue ?? value.description }

    /// What to do about a publish no stream took (JetStream's "no responders").
    private static func hint(_ problem: String, subject: String) -> String {
        guard problem.lowercased().contains("no responders") else { return "" }
        return
            "; no JetStream stream stores '\(subject)': give this sink stream: NAME and create: true, or create a stream for it"
    }

    private func send(_ publish: Pending) throws {
        var publish = publish
        publish.tries += 1
        var message: OpaquePointer?
        var status = publish.data.withUnsafeBytes { raw in
            natsMsg_Create(&message, publish.subject, nil, raw.baseAddress, Int32(raw.count))
        }
        guard status == NATS_OK, let message else {
            throw context.error("cannot publish to '\(publish.subject)': \(NATSError(status, doing: "creating it"))")
        }
        for (key, value) in publish.headers { natsMsgHeader_Set(message, key, value) }
        if let id = publish.msgId { natsMsgHeader_Set(message, "Nats-Msg-Id", id) }
        guard let connection else {
            natsMsg_Destroy(message)
            throw context.error("cannot publish to '\(publish.subject)': not connected to NATS")
        }
        guard jetstream, let js = connection.jetStream else {
            status = natsConnection_PublishMsg(connection.connection, message)
            natsMsg_Destroy(message)
            guard status == NATS_OK else {
                throw context.error(
                    "cannot publish to '\(publish.subject)': \(NATSError(status, doing: "core publish"))")
            }
            if let origin = publish.origin {
                flushing.append(origin)
                if flushing.count == 1 {
                    Origin.with(nil) { _ = context.scheduler.schedule { [weak self] in self?.flushCore() } }
                }
            }
            return
        }
        let key = nextKey
        nextKey += 1
        pending[key] = publish
        answers.expect(message, key: key)
        var owned: OpaquePointer? = message
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        status = js_PublishMsgAsync(js, &owned, &options)
        if status != NATS_OK {
            answers.forget(message)
            if owned != nil { natsMsg_Destroy(message) }
            pending[key] = nil
            throw context.error(
                "cannot publish to '\(publish.subject)': \(NATSError(status, doing: "JetStream publish"))")
        }
    }

    /// JetStream answered the publish `key`: done, tried again, or failed.
    private func answered(_ key: Int, problem: String?) {
        guard let publish = pending.removeValue(forKey: key) else { return }
        if problem == nil, let origin = publish.origin {
            context.letGo([origin])
        } else if let problem {
            if publish.tries <= retries {
                do { try send(publish) } catch { fail?(error) }
            } else {
                Origin.with(publish.origin) {
                    do {
                        try context.elementFailed(
                            context.error(
                                "publish to '\(publish.subject)' failed after \(publish.tries) tries: \(problem)"
                                    + Self.hint(problem, subject: publish.subject)),
                            element: publish.element)
                    } catch {
                        fail?(error)
                    }
                }
            }
        }
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
        }
        closed?.value = unacknowledged()
        connection?.close()
        connection = nil
        pending.removeAll()
        // They hold the run, which holds this sink.
        fail = nil
        finished = nil
    }
}
