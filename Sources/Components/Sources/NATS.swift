import CNATS
import Foundation
@_spi(Host) import Pipeline
import Reactive

private enum NATSFormat: String, ParameterChoice {
    case json, text, bytes
}

private enum Key {
    static let stream = Parameter<String?>(
        "stream", doc: "The JetStream stream to read; without it, core NATS (at-most-once).", example: "ORDERS")
    static let subject = Parameter<String?>(
        "subject", doc: "The subjects to read (wildcards allowed): the consumer's filter.", example: "orders.>")
    static let durable = Parameter<String?>(
        "durable",
        doc:
            "The durable consumer's name: every runner with the same name shares its messages. Under core NATS, the queue group.",
        example: "order-writer")
    static let deliver = Parameter<String>(
        "deliver", default: "all",
        doc:
            "Where a new consumer starts: all, new, last, a stream sequence (1042) or a time (2026-11-23T10:00:00Z).")
    static let ackWait = Parameter<RxTimeInterval>(
        "ackWait", default: .seconds(30),
        doc: "How long the server waits for a message's acknowledgement before delivering it again."
    ).above(RxTimeInterval.zero)
    static let maxDeliver = Parameter<Int>(
        "maxDeliver", default: 5, doc: "How often a message is delivered at most; after that, deadLetter."
    ).atLeast(1)
    static let maxAckPending = Parameter<Int>(
        "maxAckPending", default: 1000,
        doc: "How many messages this runner holds unacknowledged at most: it fetches no more until some are settled."
    ).atLeast(1)
    static let batch = Parameter<Int>("batch", default: 100, doc: "How many messages one fetch asks for.").atLeast(1)
    static let nakDelay = Parameter<RxTimeInterval>(
        "nakDelay", default: .seconds(1), doc: "How long a failed message waits before it is delivered again."
    ).atLeast(RxTimeInterval.zero)
    static let deadLetter = Parameter<String?>(
        "deadLetter",
        doc:
            "A subject a message is published to (with its error in the Rivulet-Error header) once it failed maxDeliver times.",
        example: "orders.dead")
    static let format = Parameter<NATSFormat>(
        "format", default: .json,
        doc: "json: the data is a JSON value; text: a string; bytes: a base64 string.")
    static let metadata = Parameter<String?>(
        "metadata",
        doc:
            "A field added to each element: {subject, stream, sequence, delivered, headers}. A value that is not an object is put under value.",
        example: "_nats")
    static let create = Parameter<Bool>(
        "create", default: false,
        doc: "Create the stream when it does not exist (file storage, the subject as its subjects): for local use.")
}

extension BuiltinComponents {
    /// `nats: {stream, subject, durable}` — messages from NATS JetStream (or core NATS).
    public static let natsSource = ComponentSpec(
        name: "nats",
        summary: "Reads messages from a NATS JetStream durable consumer (at-least-once), or core NATS (at-most-once).",
        docs: """
            With stream: a pull consumer named durable is created on first use with the file's \
            settings (an existing one whose settings differ is an error naming both); every runner \
            with the same durable shares its messages. A message is acknowledged only when all the \
            work it caused is done: every element derived from it was written by every sink that \
            received it, or was dropped on purpose (filter, a superseded debounce, take past its \
            end). A message whose element fails goes back after nakDelay; once it was delivered \
            maxDeliver times it is published to deadLetter (if named) and no longer delivered. \
            Delivery: at-least-once. Without stream: a core NATS subscription to subject, in the \
            queue group durable when named; at-most-once (what is in flight when a runner dies is \
            lost). Each element is the message's data; metadata adds its subject, sequence, \
            delivery count and headers. The source never completes: a signal (SIGINT, SIGTERM) \
            stops fetching, lets what is in flight finish and be acknowledged, then ends the run. \
            A lost server is reconnected to (reported on stderr); the run fails after lostAfter \
            without it. Under rivulet test give its stream an input.
            """,
        parameters: [
            Key.stream, Key.subject, Key.durable, Key.deliver, Key.ackWait, Key.maxDeliver, Key.maxAckPending,
            Key.batch, Key.nakDelay, Key.deadLetter, Key.format, Key.metadata, Key.create,
        ] + NATSParameters.connection,
        example: "source: { nats: { stream: ORDERS, subject: \"orders.>\", durable: order-writer } }",
        validate: { values, validation in
            NATSParameters.validate(values, validation)
            if values.has(Key.stream) {
                if !values.has(Key.durable) {
                    validation.error(
                        "a JetStream source needs durable: the consumer's name", at: Key.stream, in: values,
                        note: "runners with the same durable share its messages")
                }
                if NATSDeliverPolicy(values[Key.deliver]) == nil {
                    validation.error(
                        "deliver '\(values[Key.deliver])' is not all, new, last, a sequence or a time",
                        at: Key.deliver, in: values)
                }
            } else {
                if !values.has(Key.subject) {
                    validation.error("a core NATS source needs subject (or write stream for JetStream)", in: values)
                }
                for key in [Key.deadLetter, Key.metadata] as [Parameter<String?>]
                where values.has(key) && key.spec.name == "deadLetter" {
                    validation.error("deadLetter needs stream: core NATS does not redeliver", at: key, in: values)
                }
            }
        },
        checkpointing: .stateless,
        elementErrors: true,
        factory: .source { parameters, context in
            let endpoint = NATSParameters.endpoint(parameters, context: context)
            let settings = NATSConsumerSettings(
                stream: parameters[Key.stream], subject: parameters[Key.subject], durable: parameters[Key.durable],
                deliver: NATSDeliverPolicy(parameters[Key.deliver]) ?? .all, ackWait: parameters[Key.ackWait],
                maxDeliver: parameters[Key.maxDeliver], maxAckPending: parameters[Key.maxAckPending],
                batch: parameters[Key.batch], nakDelay: parameters[Key.nakDelay],
                deadLetter: parameters[Key.deadLetter], create: parameters[Key.create])
            let decoder = NATSDecoder(format: parameters[Key.format], metadataField: parameters[Key.metadata])
            return PipelineSource { _ in
                NATSSource.observable(endpoint: endpoint, settings: settings, decoder: decoder, context: context)
            }
        })
}

/// Where a new consumer starts.
enum NATSDeliverPolicy: Equatable {
    case all, new, last
    case sequence(UInt64)
    case time(Int64)

    init?(_ text: String) {
        switch text {
        case "all": self = .all
        case "new": self = .new
        case "last": self = .last
        default:
            if let sequence = UInt64(text), sequence > 0 {
                self = .sequence(sequence)
            } else if let date = ISO8601DateFormatter().date(from: text) {
                self = .time(Int64(date.timeIntervalSince1970 * 1e9))
            } else {
                return nil
            }
        }
    }
}

/// What the file asks of the consumer.
struct NATSConsumerSettings {
    var stream: String?
    var subject: String?
    var durable: String?
    var deliver: NATSDeliverPolicy
    var ackWait: RxTimeInterval
    var maxDeliver: Int
    var maxAckPending: Int
    var batch: Int
    var nakDelay: RxTimeInterval
    var deadLetter: String?
    var create: Bool
}

/// A message's data as an element.
struct NATSDecoder {
    fileprivate let format: NATSFormat
    let metadataField: String?

    func decode(_ message: OpaquePointer) throws -> Value {
        let length = Int(natsMsg_GetDataLength(message))
        let bytes = UnsafeBufferPointer(
            start: natsMsg_GetData(message).map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) },
            count: length)
        var value: Value
        switch format {
        case .json: value = try JSONParser.parse(bytes)
        case .text: value = .string(String(decoding: bytes, as: UTF8.self))
        case .bytes: value = .string(Data(bytes).base64EncodedString())
        }
        guard let metadataField else { return value }
        if case .object = value {} else { value = ["value": value] }
        if case .object(var fields) = value {
            fields[metadataField] = Self.metadata(of: message)
            value = .object(fields)
        }
        return value
    }

    /// The message's text, for a report of one that could not be read.
    static func text(of message: OpaquePointer) -> String {
        let length = Int(natsMsg_GetDataLength(message))
        guard let data = natsMsg_GetData(message) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    static func metadata(of message: OpaquePointer) -> Value {
        var fields = JSONObject()
        fields["subject"] = .string(String(cString: natsMsg_GetSubject(message)))
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
            fields["stream"] = .string(String(cString: meta.pointee.Stream))
            fields["sequence"] = .int(Int(meta.pointee.Sequence.Stream))
            fields["delivered"] = .int(Int(meta.pointee.NumDelivered))
            jsMsgMetaData_Destroy(meta)
        }
        var headers = JSONObject()
        var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        var count: Int32 = 0
        if natsMsgHeader_Keys(message, &keys, &count) == NATS_OK, let keys {
            for index in 0..<Int(count) {
                guard let key = keys[index] else { continue }
                var value: UnsafePointer<CChar>?
                if natsMsgHeader_Get(message, key, &value) == NATS_OK, let value {
                    headers[String(cString: key)] = .string(String(cString: value))
                }
            }
            free(keys)
        }
        fields["headers"] = .object(headers)
        return .object(fields)
    }
}

/// One message from a durable consumer, as the origin of what it causes: when nothing holds it
/// any more, it is acknowledged, or sent back if something failed or the run was abandoned.
final class NATSDelivery: Origin {
    let message: OpaquePointer
    let consumer: NATSConsumer
    var failure: String?

    init(message: OpaquePointer, consumer: NATSConsumer) {
        self.message = message
        self.consumer = consumer
    }

    override func fail(_ error: any Error) {
        if failure == nil { failure = (error as? PipelineRuntimeError)?.message ?? "\(error)" }
    }

    deinit { consumer.settle(message, failure: failure) }
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

    init(connection: NATSConnection, settings: NATSConsumerSettings, ending: RunEnding) {
        self.connection = connection
        self.settings = settings
        self.ending = ending
    }

    /// Checks the stream (creating it if the file asks), creates or checks the consumer, and
    /// binds a pull subscription to it.
    func open() throws {
        guard let js = connection.jetStream, let stream = settings.stream, let durable = settings.durable else {
            return
        }
        var code = jsErrCode(rawValue: 0)
        var streamInfo: UnsafeMutablePointer<jsStreamInfo>?
        var status = js_GetStreamInfo(&streamInfo, js, stream, nil, &code)
        if status == NATS_OK {
            jsStreamInfo_Destroy(streamInfo)
        } else if NATSError(status, code: code, doing: "").isNotFound {
            guard settings.create else {
                throw NATSSetupError(
                    "stream '\(stream)' does not exist on \(connection.endpoint.described); create it, or write create: true to create it"
                )
            }
            try createStream(stream, js: js)
        } else {
            throw NATSError(
                status, code: code, doing: "cannot read stream '\(stream)' on \(connection.endpoint.described)")
        }
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        status = js_GetConsumerInfo(&info, js, stream, durable, nil, &code)
        if status == NATS_OK, let info {
            defer { jsConsumerInfo_Destroy(info) }
            let differences = differences(from: info.pointee.Config.pointee)
            if !differences.isEmpty {
                throw NATSSetupError(
                    "consumer '\(durable)' on stream '\(stream)' exists with other settings: \(differences.joined(separator: "; ")); delete it or write the same settings"
                )
            }
        } else if NATSError(status, code: code, doing: "").isNotFound {
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

    private func createStream(_ stream: String, js: OpaquePointer) throws {
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        var code = jsErrCode(rawValue: 0)
        let subject = strdup(settings.subject ?? "\(stream).>")
        defer { free(subject) }
        var subjects: [UnsafePointer<CChar>?] = [UnsafePointer(subject)]
        let status = stream.withCString { name in
            subjects.withUnsafeMutableBufferPointer { buffer in
                config.Name = name
                config.Subjects = buffer.baseAddress
                config.SubjectsLen = 1
                config.Storage = js_FileStorage
                return js_AddStream(nil, js, &config, nil, &code)
            }
        }
        guard status == NATS_OK else { throw NATSError(status, code: code, doing: "cannot create stream '\(stream)'") }
    }

    private func consumerConfig(_ body: (inout jsConsumerConfig) -> Void) {
        var config = jsConsumerConfig()
        jsConsumerConfig_Init(&config)
        config.AckPolicy = js_AckExplicit
        config.AckWait = settings.ackWait.totalNanoseconds
        config.MaxDeliver = Int64(settings.maxDeliver)
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
        var code = jsErrCode(rawValue: 0)
        var status = NATS_OK
        consumerConfig { config in
            status = durable.withCString { name in
                (settings.subject ?? "").withCString { filter in
                    config.Durable = name
                    if settings.subject != nil { config.FilterSubject = filter }
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

    /// The settings of an existing consumer that differ from the file's, each as "NAME THERE (file: HERE)".
    private func differences(from existing: jsConsumerConfig) -> [String] {
        var found: [String] = []
        func compare(_ name: String, _ there: String, _ here: String) {
            if there != here { found.append("\(name) \(there) (the file: \(here))") }
        }
        compare("ackWait", "\(existing.AckWait / 1_000_000)ms", "\(settings.ackWait.natsMilliseconds)ms")
        compare("maxDeliver", "\(existing.MaxDeliver)", "\(settings.maxDeliver)")
        compare("maxAckPending", "\(existing.MaxAckPending)", "\(settings.maxAckPending)")
        let filter = existing.FilterSubject.map { String(cString: $0) } ?? ""
        compare("subject", filter.isEmpty ? "(all)" : filter, settings.subject ?? "(all)")
        return found
    }

    /// Fetches until stopped, handing each batch to `deliver` (on the I/O thread; it enqueues).
    /// Returns the error that ended it, or nil when stopped.
    func fetchLoop(deliver: ([OpaquePointer]) -> Void) -> (any Error)? {
        guard let subscription else { return nil }
        while true {
            condition.lock()
            while inFlight >= settings.maxAckPending && !stopped {
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.2))
            }
            let letters = deadLetters
            deadLetters = []
            let room = settings.maxAckPending - inFlight
            let isStopped = stopped
            condition.unlock()
            publishDeadLetters(letters)
            if isStopped { return nil }
            var list = natsMsgList()
            var code = jsErrCode(rawValue: 0)
            let status = natsSubscription_Fetch(&list, subscription, Int32(min(settings.batch, room)), 500, &code)
            if status == NATS_OK {
                var messages: [OpaquePointer] = []
                messages.reserveCapacity(Int(list.Count))
                for index in 0..<Int(list.Count) {
                    if let message = list.Msgs[index] {
                        messages.append(message)
                        list.Msgs[index] = nil
                    }
                }
                natsMsgList_Destroy(&list)
                condition.lock()
                inFlight += messages.count
                condition.unlock()
                deliver(messages)
                continue
            }
            if let down = connection.downFor, down > connection.endpoint.lostAfter {
                return NATSSetupError(
                    "the NATS server at \(connection.endpoint.described) was unreachable for \(down.formatted(.units(allowed: [.seconds], width: .narrow))); giving up (lostAfter)"
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

    /// Stops fetching; the loop returns within a fetch's wait.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// A message given back without being delivered (the run ended first).
    func giveBack(_ message: OpaquePointer) {
        condition.lock()
        defer { condition.unlock() }
        if !closed { natsMsg_Nak(message, nil) }
        natsMsg_Destroy(message)
        inFlight -= 1
    }

    /// Acknowledges `message`, or sends it back: at once if the run was abandoned, after
    /// nakDelay if it failed, to the dead-letter subject once it failed maxDeliver times.
    func settle(_ message: OpaquePointer, failure: String?) {
        condition.lock()
        defer { condition.unlock() }
        if closed {
            natsMsg_Destroy(message)
            return
        }
        if ending.isAbandoned {
            natsMsg_Nak(message, nil)
        } else if let failure {
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
        } else {
            natsMsg_Ack(message, nil)
        }
        natsMsg_Destroy(message)
        inFlight -= 1
        condition.signal()
    }

    private func release() {
        condition.lock()
        inFlight -= 1
        condition.signal()
        condition.unlock()
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
                // Not stored: leave the message to come back rather than lose it.
                if status != NATS_OK {
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

/// Registers the drains of sources that can stop reading and let their stream finish.
enum NATSSource {
    static func observable(
        endpoint: NATSEndpoint, settings: NATSConsumerSettings, decoder: NATSDecoder, context: ComponentContext
    ) -> Observable<Value> {
        Observable { observer, lifetime in
            guard let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler else {
                observer.on(
                    .error(
                        context.error("nats reads on the real clock only; under rivulet test give this stream an input")
                    ))
                return
            }
            let target = SchedulerBound((observer, lifetime))
            let boundContext = SchedulerBound(context)
            let log = SchedulerBound(context.log)
            let name = context.componentName
            let report: @Sendable (String) -> Void = { line in scheduler.enqueue { log.value("\(name): \(line)") } }
            let ending = context.shared(RunEnding.self) { RunEnding() }
            let drains = context.shared(SourceDrains.self) { SourceDrains() }
            let fail: @Sendable (any Error) -> Void = { error in
                scheduler.enqueue {
                    let (observer, lifetime) = target.value
                    guard !lifetime.isDisposed else { return }
                    observer.on(.error(boundContext.value.error(Secrets.shared.redact("\(error)"))))
                }
            }
            let complete: @Sendable () -> Void = {
                scheduler.enqueue {
                    let (observer, lifetime) = target.value
                    if !lifetime.isDisposed { observer.on(.completed) }
                }
            }
            if settings.stream == nil {
                subscribeCore(
                    endpoint: endpoint, settings: settings, decoder: decoder, context: context, target: target,
                    scheduler: scheduler, report: report, fail: fail, complete: complete, drains: drains,
                    lifetime: lifetime)
                return
            }
            let worker = NATSWorker()
            lifetime.onDispose { worker.stop() }
            drains.add { worker.stop() }
            let thread = Thread {
                let connection: NATSConnection
                do {
                    connection = try NATSConnection(endpoint, name: "rivulet \(name)", report: report)
                } catch {
                    worker.markDone()
                    return fail(error)
                }
                let consumer = NATSConsumer(connection: connection, settings: settings, ending: ending)
                defer {
                    consumer.close()
                    connection.close()
                    worker.markDone()
                }
                do { try consumer.open() } catch { return fail(error) }
                guard worker.begin(consumer) else { return }
                let bound = SchedulerBound(consumer)
                let failure = consumer.fetchLoop { messages in
                    let batch = SchedulerBound(messages)
                    scheduler.enqueue {
                        let (observer, lifetime) = target.value
                        let consumer = bound.value
                        let context = boundContext.value
                        for message in batch.value {
                            guard !lifetime.isDisposed else {
                                consumer.giveBack(message)
                                continue
                            }
                            let delivery = NATSDelivery(message: message, consumer: consumer)
                            Origin.with(delivery) {
                                do {
                                    observer.on(.next(try decoder.decode(message)))
                                } catch {
                                    do {
                                        try context.elementFailed(
                                            context.error("message is not JSON: \(error)"),
                                            element: .string(NATSDecoder.text(of: message)))
                                    } catch {
                                        observer.on(.error(error))
                                    }
                                }
                            }
                        }
                    }
                }
                if let failure { fail(failure) } else { complete() }
                // Acknowledgements still to come go out on this connection: wait for the messages
                // in flight to be settled (the run ends them one way or the other) before closing.
                worker.waitUntilSettled(consumer)
            }
            drains.atEnd { worker.finish() }
            thread.name = "nats \(settings.durable ?? "")"
            thread.start()
            context.log("\(name): reading \(settings.stream ?? "")/\(settings.durable ?? "") on \(endpoint.described)")
        }
    }

    /// Core NATS: a (queue) subscription whose messages go straight into the pipeline.
    private static func subscribeCore(
        endpoint: NATSEndpoint, settings: NATSConsumerSettings, decoder: NATSDecoder, context: ComponentContext,
        target: SchedulerBound<(AnyObserver<Value>, Lifetime)>, scheduler: any ConcurrentDeliveryScheduler,
        report: @escaping @Sendable (String) -> Void, fail: @escaping @Sendable (any Error) -> Void,
        complete: @escaping @Sendable () -> Void, drains: SourceDrains, lifetime: Lifetime
    ) {
        let connection: NATSConnection
        do {
            connection = try NATSConnection(endpoint, name: "rivulet \(context.componentName)", report: report)
        } catch {
            return fail(error)
        }
        let boundContext = SchedulerBound(context)
        let handler = CoreMessages { message in
            let boxed = SchedulerBound(message)
            scheduler.enqueue {
                let (observer, lifetime) = target.value
                let context = boundContext.value
                defer { natsMsg_Destroy(boxed.value) }
                guard !lifetime.isDisposed else { return }
                do {
                    observer.on(.next(try decoder.decode(boxed.value)))
                } catch {
                    do {
                        try context.elementFailed(
                            context.error("message is not JSON: \(error)"),
                            element: .string(NATSDecoder.text(of: boxed.value)))
                    } catch {
                        observer.on(.error(error))
                    }
                }
            }
        }
        var subscription: OpaquePointer?
        let closure = Unmanaged.passRetained(handler).toOpaque()
        let callback: natsMsgHandler = { _, _, message, closure in
            Unmanaged<CoreMessages>.fromOpaque(closure!).takeUnretainedValue().receive(message!)
        }
        let status =
            if let queue = settings.durable {
                natsConnection_QueueSubscribe(
                    &subscription, connection.connection, settings.subject ?? ">", queue, callback, closure)
            } else {
                natsConnection_Subscribe(
                    &subscription, connection.connection, settings.subject ?? ">", callback, closure)
            }
        guard status == NATS_OK, let subscription else {
            Unmanaged<CoreMessages>.fromOpaque(closure).release()
            connection.close()
            return fail(NATSError(status, doing: "cannot subscribe to '\(settings.subject ?? "")'"))
        }
        let bound = SchedulerBound(subscription)
        var closed = false
        let close = {
            if closed { return }
            closed = true
            natsSubscription_Unsubscribe(bound.value)
            natsSubscription_Destroy(bound.value)
            connection.close()
            Unmanaged<CoreMessages>.fromOpaque(closure).release()
        }
        lifetime.onDispose(close)
        drains.add {
            close()
            complete()
        }
        context.log("\(context.componentName): subscribed to \(settings.subject ?? "") on \(endpoint.described)")
    }
}

/// The callback target of a core subscription.
private final class CoreMessages: @unchecked Sendable {
    let receive: (OpaquePointer) -> Void
    init(_ receive: @escaping (OpaquePointer) -> Void) { self.receive = receive }
}

/// The fetch thread's stop switch, safe to flip from the pipeline's thread before or after the
/// consumer exists.
final class NATSWorker: @unchecked Sendable {
    private let lock = NSCondition()
    private var consumer: NATSConsumer?
    private var stopped = false
    private var runOver = false
    private var done = false

    /// Hands over the consumer; false if the run stopped meanwhile.
    func begin(_ consumer: NATSConsumer) -> Bool {
        lock.withLock {
            self.consumer = consumer
            return !stopped
        }
    }

    func stop() {
        let consumer = lock.withLock {
            stopped = true
            return self.consumer
        }
        consumer?.stop()
    }

    /// Waits until the consumer has no message in flight, or the run is over; then marks the
    /// thread done (its caller closes the connection right after).
    func waitUntilSettled(_ consumer: NATSConsumer) {
        lock.lock()
        while consumer.hasInFlight && !runOver {
            _ = lock.wait(until: Date(timeIntervalSinceNow: 0.05))
        }
        lock.unlock()
    }

    /// After the run: stops waiting for settlements and waits (up to 5 s) for the fetch thread
    /// to flush its acknowledgements and close.
    func finish() {
        stop()
        lock.lock()
        runOver = true
        lock.broadcast()
        let limit = Date(timeIntervalSinceNow: 5)
        while !done && Date() < limit { _ = lock.wait(until: Date(timeIntervalSinceNow: 0.05)) }
        lock.unlock()
    }

    /// The fetch thread has closed its connection.
    func markDone() {
        lock.lock()
        done = true
        lock.broadcast()
        lock.unlock()
    }
}

extension NATSConsumer {
    var hasInFlight: Bool {
        condition.lock()
        defer { condition.unlock() }
        return inFlight > 0
    }
}
