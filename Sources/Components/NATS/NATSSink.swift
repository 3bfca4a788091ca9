import CNATS
import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

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
            "The JetStream stream the subject is stored in, checked when the run starts (a missing one is an error naming it, unless create). Named, a stream that does not answer for a moment (a cluster's electing its leader) is waited for until lostAfter; unnamed, such a publish fails after retries.",
        example: "INVOICES")
    static let create = Parameter<Bool>(
        "create", default: false,
        doc:
            "Create stream when it does not exist (file storage), storing the subject with each templated token as * (invoices.{{ .customer }} stores invoices.*)."
    )
    static let partitionBy = Parameter<Pipeline.Expression?>(
        "partitionBy",
        doc:
            "A key: each element is published to subject.P, P = fnv1a32(key) % partitions, the hash partitionBy and NATS's partition() mapping use.",
        example: ".customer")
    static let partitions = Parameter<Int?>(
        "partitions", doc: "How many partitions partitionBy spreads the keys over (default 16).", example: "16"
    ).atLeast(1)
    static let retries = Parameter<Int>(
        "retries", default: 5,
        doc:
            "How often a publish the stream refused (an error from JetStream) is tried again; timeouts and outages are tried until lostAfter."
    ).atLeast(0)
}

extension BuiltinComponents {
    /// `nats: {subject}` (a sink) — publishes elements to NATS.
    public static let natsSink = ComponentSpec(
        name: "nats",
        summary: "Publishes each element (as JSON, a string as its text) to a NATS subject, JetStream-acknowledged.",
        docs: """
            With jetstream (the default) every publish waits for the stream's acknowledgement, with at \
            most maxInFlight outstanding, none of them maxInFlight or more elements after the oldest \
            not acknowledged yet (the rest wait their turn, in order): so a publish sent again is \
            stored after fewer than maxInFlight later ones, which the maxDelay of an event-time \
            reader should cover (lower maxInFlight if it does not). One not answered \
            within 5 s, or not sent because the server is away, is sent again (after 100 ms, \
            doubling up to 2 s) until lostAfter has passed since it was first sent, and a publish \
            not answered in time halves how many may be outstanding (grown back by one with each \
            answer): a server slowed by other clients gets fewer at once rather than the same ones \
            again. One the stream \
            refuses is tried again up to retries times; then it fails the run (or is handled by \
            onError). A server killed and restarted within lostAfter loses nothing and holds \
            nothing up for ever. \
            A message from a durable nats source is acknowledged only after the publishes it caused \
            were. With msgId, JetStream stores each id once, so a retried publish or a redelivered \
            input is not stored twice: exactly-once into the stream within its duplicate window, \
            at-least-once otherwise. Without msgId, an element caused by one message of a durable \
            nats source (a map, a filter, each result of a flatMap) is published with an id derived \
            from it: CONSUMER:SEQUENCE (the consumer's name and the message's stream sequence), then \
            :2, :3 for its later results; so a message delivered again after a runner died is stored \
            once. An element of several messages (an aggregate's window) gets none. msgId: "" sends \
            no id at all (the stream then does no duplicate check for it, a little cheaper). With jetstream: false the publish is core NATS: at-most-once, \
            flushed to the server before its input is acknowledged. JetStream stores a subject only \
            if a stream does: name it with stream (and create: true to create it at start); a publish \
            no stream takes fails with an error that says so. \
            With partitionBy, an element goes to subject.P, where P is the partition of its key \
            (0 to partitions - 1): the partitions a nats source with partitions reads, one runner \
            each. Producers that are not Rivulet get the same partitions from the server's subject \
            mapping: publishing to orders.in.KEY with the mapping "orders.in.*" -> \
            "orders.{{partition(16,1)}}" lands where partitionBy: .key, partitions: 16 on subject \
            orders does, for a key that is a text of one subject token (no dots, spaces or \
            wildcards); any other key only Rivulet can place.
            """,
        parameters: [
            Key.subject, Key.headers, Key.msgId, Key.jetstream, Key.stream, Key.create, Key.partitionBy,
            Key.partitions, Key.maxInFlight, Key.retries,
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
            if values[Key.partitions] != nil && values[Key.partitionBy] == nil {
                validation.error(
                    "partitions needs partitionBy: the key that picks an element's partition", at: Key.partitions,
                    in: values)
            }
            NATSParameters.validate(values, validation)
        },
        checkpointing: .restartsWork(
            "the JetStream publishes not acknowledged at the last checkpoint (a checkpoint first waits up to 5s for "
                + "JetStream's answers; what is still in flight is kept in it and published again on restart: with "
                + "msgId JetStream drops the repeats); core publishes are flushed to the server first"),
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
                partitioning: parameters[Key.partitionBy].map { ($0, parameters[Key.partitions] ?? 16) },
                stream: parameters[Key.stream].map { ($0, parameters[Key.create]) },
                maxInFlight: parameters[Key.maxInFlight], retries: parameters[Key.retries], context: context)
        })
}
