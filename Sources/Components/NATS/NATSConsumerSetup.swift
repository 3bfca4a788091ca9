import CNATS
import Foundation

/// What opening a durable consumer does before its messages are fetched: the stream checked (or
/// made), the consumer made, checked against the file or made again from a partition's stored
/// state, and a pull subscription bound to it.
struct NATSConsumerSetup {
    let settings: NATSConsumerSettings
    let connection: NATSConnection
    /// Where lines a user should see go.
    let report: @Sendable (String) -> Void

    /// Checks the stream (creating it if the file asks), creates or checks the consumer, and
    /// binds a pull subscription to it.
    func subscribe() throws -> OpaquePointer? {
        guard let js = connection.jetStream, let stream = settings.stream, let durable = settings.durable else {
            return nil
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
        return made
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
        settings.deliver.apply(to: &config)
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
}

/// A setup problem worth its own sentence (a missing stream, a consumer with other settings).
struct NATSSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension NATSDeliverPolicy {
    /// Sets where a consumer made with `config` starts.
    func apply(to config: inout jsConsumerConfig) {
        switch self {
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
    }
}
