import CNATS
import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

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
        doc:
            "How long the server waits for a message's acknowledgement before delivering it again. A runner that is alive says the messages its pipeline holds are in progress every third of ackWait, so a window longer than ackWait is not delivered again."
    ).above(RxTimeInterval.zero)
    static let maxDeliver = Parameter<Int>(
        "maxDeliver", default: 5,
        doc:
            "How many deliveries a message that fails may have; at the one that fails past it, deadLetter (or dropped)."
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
            "A subject a message is published to (with its error in the Rivulet-Error header) once it failed maxDeliver times; a stream must store it (create: true makes STREAM_DEAD when none does).",
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
    static let group = Parameter<String?>(
        "group",
        doc:
            "With partitions: the runners with the same group divide the partitions among themselves, each partition read by one runner at a time (leases in the key-value bucket rivulet-leases-GROUP).",
        example: "order-totals")
    static let partitions = Parameter<Int?>(
        "partitions",
        doc:
            "How many partitions subject.0 ... subject.N-1 there are (as a nats sink with partitionBy writes them); needs group.",
        example: "16"
    ).atLeast(1)
    static let leaseTimeout = Parameter<RxTimeInterval>(
        "leaseTimeout", default: .seconds(10),
        doc:
            "With group: how long a runner that stopped renewing its leases (every third of it) keeps its partitions."
    ).atLeast(RxTimeInterval.seconds(1))
    static let replicas = Parameter<Int>(
        "replicas", default: 1,
        doc:
            "With create: how many servers of a cluster keep a copy of the stream (1 to 5; 3 survives losing one), and of a group's lease and state buckets when a runner creates them."
    )
    .atLeast(1)
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
            end). A message whose element fails (under any onError, fail included: the run fails \
            and the message goes back) is delivered again after nakDelay; when it fails on its \
            maxDeliver-th delivery or later it is published to deadLetter (if named; dropped \
            otherwise) and no longer delivered, so a restarted runner gets past it. Deliveries that \
            a failed or stopped run gave back unprocessed count too, but the server never drops a \
            message on its own: only a failure does, so a good message behind a bad one is never \
            lost. Delivery: at-least-once. Without stream: a core NATS subscription to subject, in the \
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
            Key.replicas, Key.group, Key.partitions, Key.leaseTimeout,
        ] + NATSParameters.connection,
        example: "source: { nats: { stream: ORDERS, subject: \"orders.>\", durable: order-writer } }",
        validate: { values, validation in
            NATSParameters.validate(values, validation)
            BuiltinComponents.validateNATSGroup(values, validation)
            BuiltinComponents.validateNATSConsumer(values, validation)
        },
        checkpointing: .keepsState(
            "with stream, which messages each checkpoint holds (the consumer's acknowledgement floor and the stream sequences above it): a message done is acknowledged once a checkpoint holds its effect (the last one of a run a signal stopped included: what it holds is acknowledged, what was not read yet goes back), and one delivered again that a checkpoint holds is acknowledged without being processed twice"
        ),
        delivery: Delivery(
            .atLeastOnce,
            "with stream, a message is acknowledged once all the work it caused is done, and delivered again (after ackWait) when a runner dies; without stream (core NATS) at-most-once"
        ),
        elementErrors: true,
        factory: .source { parameters, context in
            let endpoint = NATSParameters.endpoint(parameters, context: context)
            let settings = NATSConsumerSettings(
                stream: parameters[Key.stream], subject: parameters[Key.subject], durable: parameters[Key.durable],
                deliver: NATSDeliverPolicy(parameters[Key.deliver]) ?? .all, ackWait: parameters[Key.ackWait],
                maxDeliver: parameters[Key.maxDeliver], maxAckPending: parameters[Key.maxAckPending],
                batch: parameters[Key.batch], nakDelay: parameters[Key.nakDelay],
                deadLetter: parameters[Key.deadLetter], create: parameters[Key.create],
                replicas: parameters[Key.replicas], group: parameters[Key.group],
                partitions: parameters[Key.partitions] ?? 0, leaseTimeout: parameters[Key.leaseTimeout])
            let decoder = NATSDecoder(format: parameters[Key.format], metadataField: parameters[Key.metadata])
            if let group = settings.group, let checkpoints = context.checkpoints {
                _ = context.shared(GroupPartitionStates.self) {
                    GroupPartitionStates(
                        group: group, partitions: settings.partitions, checkpoints: checkpoints,
                        sourceKey: context.checkpointKey)
                }
            }
            return PipelineSource { _ in
                NATSSource.observable(endpoint: endpoint, settings: settings, decoder: decoder, context: context)
            }
        }
    ).declaring { traits in
        traits.awaitsAcknowledgement = { values in values.has(Key.stream) }
        // Its messages carry origins, which only the pipeline's thread may touch.
        traits.setsOrigins = { _ in true }
        traits.groupPartitions = { values in
            guard let group = values[Key.group], let partitions = values[Key.partitions] else { return nil }
            return GroupPartitions(group: group, partitions: partitions)
        }
    }

    /// A runner group's settings: `group` and `partitions` together, with stream and subject,
    /// without durable, within the server's limits.
    private static func validateNATSGroup(_ values: ParameterValues, _ validation: ComponentValidation) {
        if values.has(Key.group) != values.has(Key.partitions) {
            validation.error(
                "group and partitions go together: the runners of a group divide its partitions",
                at: values.has(Key.group) ? Key.group : Key.partitions, in: values)
        }
        if let group = values[Key.group] {
            if !values.has(Key.stream) || !values.has(Key.subject) {
                validation.error(
                    "a partitioned source needs stream and subject (the partitions are subject.0, subject.1, ...)",
                    at: Key.group, in: values)
            }
            if values.has(Key.durable) {
                validation.error(
                    "durable and group exclude each other: a group's consumers are named GROUP-pP",
                    at: Key.durable, in: values)
            }
            if group.isEmpty
                || !group.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            {
                validation.error(
                    "group '\(group)' may hold only letters, digits, - and _ (it names consumers and a bucket)",
                    at: Key.group, in: values)
            } else if group.count > NATSSourceLimits.groupNameLength {
                // The server takes names of up to 255 characters; a group names its buckets
                // (rivulet-leases-GROUP, within KV_...) and consumers (GROUP-pP-TOKEN).
                validation.error(
                    "group is \(group.count) characters long, more than the \(NATSSourceLimits.groupNameLength) a group's "
                        + "name may have (it names its buckets and consumers on the server)", at: Key.group,
                    in: values)
            }
            if let partitions = values[Key.partitions], partitions > NATSSourceLimits.partitions {
                validation.error(
                    "partitions is \(partitions), more than the \(NATSSourceLimits.partitions) a group may have: each "
                        + "lease round renews every partition's lease, one request each", at: Key.partitions,
                    in: values, note: "more runners read more partitions each; fewer, larger partitions do as well")
            }
        }
    }

    /// A JetStream consumer's settings (durable, replicas, deadLetter, deliver), or a core NATS
    /// subscription's.
    private static func validateNATSConsumer(_ values: ParameterValues, _ validation: ComponentValidation) {
        if values.has(Key.stream) {
            if !values.has(Key.durable) && !values.has(Key.group) {
                validation.error(
                    "a JetStream source needs durable: the consumer's name", at: Key.stream, in: values,
                    note: "runners with the same durable share its messages")
            }
            if values.has(Key.replicas) && !values[Key.create] {
                validation.error(
                    "replicas needs create: true: an existing stream keeps its own", at: Key.replicas, in: values)
            } else if values[Key.replicas] > 5 {
                validation.error(
                    "replicas \(values[Key.replicas]) is more than NATS allows", at: Key.replicas, in: values,
                    note: "a stream has 1 to 5 replicas")
            }
            // Dead letters the consumer itself reads come back to it, over and over.
            let filter = values[Key.subject] ?? (values[Key.create] ? "\(values[Key.stream] ?? "").>" : nil)
            if let dead = values[Key.deadLetter], let filter, NATSStreams.subject(dead, matches: filter) {
                validation.error(
                    "deadLetter '\(dead)' is one of the subjects this consumer reads ('\(filter)'): each dead letter would be read again, failed again and dead-lettered again",
                    at: Key.deadLetter, in: values,
                    note: "publish dead letters outside '\(filter)', such as dead.\(dead)")
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
            if values.has(Key.deadLetter) {
                validation.error(
                    "deadLetter needs stream: core NATS does not redeliver", at: Key.deadLetter, in: values)
            }
        }
    }
}

/// The bounds of a group's names and partitions, checked by lint.
enum NATSSourceLimits {
    /// The longest group name.
    static let groupNameLength = 200
    /// The most partitions of a group (2,000 kept a runner losing its own leases; 100,000 never read).
    static let partitions = 256
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
            let target = NATSTarget(observer, lifetime)
            let boundContext = SchedulerBound(context)
            let log = SchedulerBound({ (line: String) in context.log(line, level: .warning) })
            let name = context.componentName
            let report: @Sendable (String) -> Void = { line in scheduler.enqueue { log.value("\(name): \(line)") } }
            let ending = context.shared(RunEnding.self) { RunEnding() }
            let drains = context.shared(SourceDrains.self) { SourceDrains() }
            // A watched run is ready once the consumer (or subscription) is in place.
            let connected = context.connecting()
            let meter = context.meter
            let (fail, complete) = endings(target, boundContext, scheduler)
            if settings.stream == nil {
                subscribeCore(
                    endpoint: endpoint, settings: settings, decoder: decoder, context: context, target: target,
                    scheduler: scheduler, report: report, fail: fail, complete: complete, drains: drains,
                    lifetime: lifetime)
                connected()
                return
            }
            var reading = NATSReading(
                endpoint: endpoint, decoder: decoder, target: target, context: boundContext, scheduler: scheduler,
                report: report, ending: ending, meter: meter, name: name)
            if context.checkpoints != nil {
                do {
                    try keepPositions(of: &reading, context: context, report: report)
                } catch {
                    connected()
                    fail(error)
                    return
                }
            }
            if let group = settings.group {
                reading.lanes = SchedulerBound(EventLanes())
                reading.watermarks = context.shared(PartitionWatermarks.self) { PartitionWatermarks() }
                let partitioned = NATSPartitionedReading(
                    reading: reading, settings: settings, group: group, opened: connected,
                    ended: { failure in if let failure { fail(failure) } else { complete() } })
                return start(partitioned, every: settings.leaseTimeout / 3, lifetime: lifetime, drains: drains)
            }
            let worker = reading.start(
                settings, opened: connected,
                ended: { failure in
                    if let failure { fail(failure) } else { complete() }
                })
            lifetime.onDispose { worker.stop() }
            drains.add { worker.stop() }
            drains.atEnd { worker.finish() }
            context.log("\(name): reading \(settings.stream ?? "")/\(settings.durable ?? "") on \(endpoint.described)")
        }
    }

    /// Under --state: the consumers' positions restored from the checkpoint and kept in the next
    /// ones (a group's partitions' states too).
    ///
    /// - Throws: `NATSSetupError` naming a consumer whose stored position is damaged.
    private static func keepPositions(
        of reading: inout NATSReading, context: ComponentContext, report: @escaping @Sendable (String) -> Void
    ) throws {
        let positions = try NATSPositions(restoring: context.restoredState)
        context.keepPosition(read: { positions.value() }, committed: { positions.committed() })
        reading.positions = positions
        reading.states = context.existing(GroupPartitionStates.self)
        reading.states?.positions = positions
        reading.states?.report = report
    }

    /// How the source's stream fails and completes from another thread: on the pipeline's, unless
    /// the run is over.
    private static func endings(
        _ target: NATSTarget, _ context: SchedulerBound<ComponentContext>,
        _ scheduler: any ConcurrentDeliveryScheduler
    ) -> (fail: @Sendable (any Error) -> Void, complete: @Sendable () -> Void) {
        let fail: @Sendable (any Error) -> Void = { error in
            scheduler.enqueue {
                target.live?.on(.error(context.value.error(Secrets.shared.redact("\(error)"))))
            }
        }
        let complete: @Sendable () -> Void = {
            scheduler.enqueue { target.live?.on(.completed) }
        }
        return (fail, complete)
    }

    /// Starts a group's reading, with a round every `period` on the run's clock.
    private static func start(
        _ partitioned: NATSPartitionedReading, every period: RxTimeInterval, lifetime: Lifetime, drains: SourceDrains
    ) {
        lifetime.add(partitioned.scheduler.schedulePeriodic(startAfter: period, period: period) { partitioned.tick() })
        lifetime.onDispose { partitioned.stop() }
        drains.add { partitioned.stop() }
        drains.atEnd { partitioned.finish() }
        partitioned.start()
    }

    /// Core NATS: a (queue) subscription whose messages go straight into the pipeline.
    private static func subscribeCore(
        endpoint: NATSEndpoint, settings: NATSConsumerSettings, decoder: NATSDecoder, context: ComponentContext,
        target: NATSTarget, scheduler: any ConcurrentDeliveryScheduler,
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
                let context = boundContext.value
                defer { natsMsg_Destroy(boxed.value) }
                guard let observer = target.live else { return }
                NATSReading.emit(boxed.value, decoder: decoder, to: observer, context: context)
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

/// Where a `nats` source's messages go, on the pipeline's thread: the subscription's observer
/// until the subscription is disposed, then nothing. The threads and drains that hold it after
/// the run (a group's lease thread, a drain never run) then hold none of the pipeline's sinks.
final class NATSTarget: @unchecked Sendable {
    private var observer: AnyObserver<Value>?
    private weak var lifetime: Lifetime?

    init(_ observer: AnyObserver<Value>, _ lifetime: Lifetime) {
        self.observer = observer
        self.lifetime = lifetime
        lifetime.onDispose { [weak self] in self?.observer = nil }
    }

    /// The observer, while the subscription lives (pipeline's thread).
    var live: AnyObserver<Value>? {
        guard let lifetime, !lifetime.isDisposed else { return nil }
        return observer
    }
}

/// The callback target of a core subscription.
private final class CoreMessages: @unchecked Sendable {
    let receive: (OpaquePointer) -> Void
    init(_ receive: @escaping (OpaquePointer) -> Void) { self.receive = receive }
}
