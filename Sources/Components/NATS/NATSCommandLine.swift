import CNATS
import Foundation
@_spi(Components) import Pipeline

/// What `rivulet nats read`, `publish` and `list` do, as kcat and the `nats` tool do for their
/// servers: read a stream or a subject with a consumer of its own that is deleted after (and that
/// the server drops by itself 30 s after a killed reader), publish lines, list what is there.
public enum NATSCommandLine {
    /// The servers to use: the ones given, else $NATS_URL, else nats://127.0.0.1:4222 (as the
    /// `nats` source and sink take them).
    public static func servers(_ given: String?) -> String {
        given ?? ProcessInfo.processInfo.environment["NATS_URL"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "nats://127.0.0.1:4222"
    }

    /// A reading's choices.
    public struct Reading {
        /// A stream's name, or a subject (wildcards allowed) that a stream stores.
        public var target: String
        /// `all` (the default), `new`, `last`, a stream sequence, or an RFC 3339 time.
        public var from: String
        /// The most messages to write; nil for every one.
        public var count: Int?
        /// Whether to wait for more once the stream is read to its end.
        public var follow: Bool
        /// Whether each line is an object with the subject, sequence, time and headers.
        public var envelope: Bool

        /// A reading of `target`.
        public init(target: String, from: String, count: Int?, follow: Bool, envelope: Bool) {
            self.target = target
            self.from = from
            self.count = count
            self.follow = follow
            self.envelope = envelope
        }
    }

    /// A failure a user should see, in a sentence.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
        /// A name that was not found, and the names there are (for the command's suggestion).
        public var unknown: (name: String, candidates: [String])? = nil
    }

    private static func connect(_ servers: String, name: String) throws -> (NATSConnection, OpaquePointer) {
        Secrets.shared.addURLCredentials(in: servers)
        let endpoint = NATSEndpoint(
            urls: servers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }, credentialsFile: nil,
            token: nil, user: nil, password: nil, lostAfter: .seconds(5))
        let connection = try NATSConnection(endpoint, name: name, report: { _ in })
        guard let js = connection.jetStream else {
            connection.close()
            throw Failure(description: "\(servers) has no JetStream")
        }
        return (connection, js)
    }

    /// Reads as `reading` says, handing `write` one line a message (no newline); `stopped` is
    /// asked between fetches. Returns how many were written.
    @discardableResult
    public static func read(
        _ reading: Reading, servers: String, stopped: () -> Bool, write: (String) -> Void
    ) throws -> Int {
        guard let deliver = NATSDeliverPolicy(reading.from) else {
            throw Failure(
                description:
                    "--from takes all, new, last, a stream sequence (from 1) or an RFC 3339 time; got '\(reading.from)'"
            )
        }
        let (connection, js) = try connect(servers, name: "rivulet nats read")
        defer { connection.close() }
        let (stream, filter) = try resolve(reading.target, js: js, servers: servers)
        let name = "rivulet-read-" + String(UInt64.random(in: 0..<UInt64.max), radix: 36)
        let pending = try addReadingConsumer(name, of: stream, filter: filter, deliver: deliver, js: js)
        // The consumer is this reading's alone: deleted however the reading ends.
        defer { _ = js_DeleteConsumer(js, stream, name, nil, nil) }
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        var subscription: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let subscribed = stream.withCString { streamName in
            name.withCString { consumer in
                options.Stream = streamName
                options.Consumer = consumer
                return js_PullSubscribe(&subscription, js, filter ?? "", name, nil, &options, &code)
            }
        }
        guard subscribed == NATS_OK, let subscription else {
            throw NATSError(subscribed, code: code, doing: "cannot read stream '\(stream)'")
        }
        defer { natsSubscription_Destroy(subscription) }
        return try fetchAll(
            subscription, of: stream, pending: pending, reading: reading, stopped: stopped, write: write)
    }

    /// Makes the consumer `name` of `stream` a reading uses; returns how many messages it has
    /// pending.
    private static func addReadingConsumer(
        _ name: String, of stream: String, filter: String?, deliver: NATSDeliverPolicy, js: OpaquePointer
    ) throws -> UInt64 {
        var config = jsConsumerConfig()
        jsConsumerConfig_Init(&config)
        config.AckPolicy = js_AckExplicit
        config.MaxDeliver = 1
        config.InactiveThreshold = 30_000_000_000
        deliver.apply(to: &config)
        // The last message of each subject a filter takes, as `nats sub --last-per-subject` reads.
        if deliver == .last && filter != nil { config.DeliverPolicy = js_DeliverLastPerSubject }
        var code = jsErrCode(rawValue: 0)
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        let status = name.withCString { durable in
            (filter ?? "").withCString { subject in
                config.Durable = durable
                if filter != nil { config.FilterSubject = subject }
                return js_AddConsumer(&info, js, stream, &config, nil, &code)
            }
        }
        guard status == NATS_OK, let info else {
            throw NATSError(status, code: code, doing: "cannot make a consumer to read stream '\(stream)'")
        }
        defer { jsConsumerInfo_Destroy(info) }
        return info.pointee.NumPending
    }

    /// Fetches and writes messages until the reading's count, the stream's end (unless it
    /// follows) or `stopped`; returns how many were written.
    private static func fetchAll(
        _ subscription: OpaquePointer, of stream: String, pending: UInt64, reading: Reading, stopped: () -> Bool,
        write: (String) -> Void
    ) throws -> Int {
        var pending = pending
        var code = jsErrCode(rawValue: 0)
        var written = 0
        while !stopped() {
            if let count = reading.count, written >= count { break }
            if !reading.follow && pending == 0 { break }
            let wanted = min(256, (reading.count ?? Int.max) - written)
            var list = natsMsgList()
            let fetched = natsSubscription_Fetch(&list, subscription, Int32(wanted), 500, &code)
            if fetched == NATS_TIMEOUT { continue }
            guard fetched == NATS_OK else {
                throw NATSError(fetched, code: code, doing: "cannot read stream '\(stream)'")
            }
            defer { natsMsgList_Destroy(&list) }
            for index in 0..<Int(list.Count) {
                guard let message = list.Msgs[index] else { continue }
                var meta: UnsafeMutablePointer<jsMsgMetaData>?
                if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
                    pending = meta.pointee.NumPending
                    write(line(message, meta: meta.pointee, envelope: reading.envelope))
                    jsMsgMetaData_Destroy(meta)
                } else {
                    write(line(message, meta: nil, envelope: reading.envelope))
                }
                _ = natsMsg_Ack(message, nil)
                written += 1
            }
        }
        return written
    }

    /// The stream to read and the subject to filter it by: a stream's name reads it whole; a
    /// subject reads the one stream that stores it.
    private static func resolve(_ target: String, js: OpaquePointer, servers: String) throws -> (String, String?) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetStreamInfo(&info, js, target, nil, &code)
        if status == NATS_OK {
            jsStreamInfo_Destroy(info)
            return (target, nil)
        }
        let storing = try NATSStreams.streams(storing: target, js: js)
        if storing.count == 1 { return (storing[0], target) }
        let names = try streamNames(js: js)
        if storing.count > 1 {
            throw Failure(
                description:
                    "'\(target)' is stored by several streams (\(storing.joined(separator: ", "))): read one of them by name"
            )
        }
        throw Failure(
            description:
                "no stream named '\(target)' or storing it on \(servers)"
                + (names.isEmpty ? " (there is no stream)" : "; streams: \(names.joined(separator: ", "))"),
            unknown: (target, names))
    }

    private static func streamNames(js: OpaquePointer) throws -> [String] {
        var list: UnsafeMutablePointer<jsStreamNamesList>?
        var code = jsErrCode(rawValue: 0)
        let status = js_StreamNames(&list, js, nil, &code)
        defer { jsStreamNamesList_Destroy(list) }
        if NATSError.isNotFound(status, code) { return [] }
        guard status == NATS_OK, let list else { throw NATSError(status, code: code, doing: "cannot list the streams") }
        return (0..<Int(list.pointee.Count)).compactMap { list.pointee.List[$0].map { String(cString: $0) } }.sorted()
    }

    /// A message as a line: its data (JSON as it is, compacted; anything else as a JSON string),
    /// or with `envelope` an object of its subject, stream sequence, time, headers and data.
    static func line(_ message: OpaquePointer, meta: jsMsgMetaData?, envelope: Bool) -> String {
        let length = Int(natsMsg_GetDataLength(message))
        let bytes = natsMsg_GetData(message).map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
        let data: Value =
            (try? JSONParser.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self))
        guard envelope else { return data.description }
        var object = JSONObject()
        object["subject"] = .string(natsMsg_GetSubject(message).map { String(cString: $0) } ?? "")
        if let meta {
            object["sequence"] = .int(Int(meta.Sequence.Stream))
            object["time"] = .string(ExpressionEnvironment.rfc3339(epochMilliseconds: Int(meta.Timestamp / 1_000_000)))
        }
        var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        var count: Int32 = 0
        var headers = JSONObject()
        if natsMsgHeader_Keys(message, &keys, &count) == NATS_OK, let keys {
            for index in 0..<Int(count) {
                guard let key = keys[index] else { continue }
                var values: UnsafeMutablePointer<UnsafePointer<CChar>?>?
                var valueCount: Int32 = 0
                guard natsMsgHeader_Values(message, key, &values, &valueCount) == NATS_OK, let values else { continue }
                let texts = (0..<Int(valueCount)).compactMap { values[$0].map { Value.string(String(cString: $0)) } }
                headers[String(cString: key)] = texts.count == 1 ? texts[0] : .array(texts)
                free(values)
            }
            free(keys)
        }
        if !headers.isEmpty { object["headers"] = .object(headers) }
        object["data"] = data
        return Value.object(object).description
    }

    /// Publishes each line `next` gives (until nil) to `subject`, each acknowledged by the stream
    /// that stores it before the next is sent. Returns how many were published.
    @discardableResult
    public static func publish(subject: String, servers: String, next: () -> String?) throws -> Int {
        let (connection, js) = try connect(servers, name: "rivulet nats publish")
        defer { connection.close() }
        if try NATSStreams.streams(storing: subject, js: js).isEmpty {
            let names = try streamNames(js: js)
            throw Failure(
                description:
                    "no stream stores '\(subject)' on \(servers), so nothing published there would be kept"
                    + (names.isEmpty ? "" : "; streams: \(names.joined(separator: ", "))"))
        }
        var published = 0
        while let line = next() {
            var code = jsErrCode(rawValue: 0)
            var ack: UnsafeMutablePointer<jsPubAck>?
            let status = js_Publish(&ack, js, subject, line, Int32(line.utf8.count), nil, &code)
            jsPubAck_Destroy(ack)
            guard status == NATS_OK else {
                throw NATSError(status, code: code, doing: "cannot publish line \(published + 1) to '\(subject)'")
            }
            published += 1
        }
        return published
    }

    /// The streams (subjects, messages, bytes, consumers with what each has pending) and the
    /// runner groups on the servers, as text.
    public static func list(servers: String) throws -> String {
        let (connection, js) = try connect(servers, name: "rivulet nats list")
        defer { connection.close() }
        var streams: [[String]] = [["STREAM", "SUBJECTS", "MESSAGES", "BYTES", "CONSUMERS"]]
        var consumers: [[String]] = [["CONSUMER", "STREAM", "PENDING", "UNACKNOWLEDGED"]]
        var groups: [[String]] = [["GROUP", "BUCKET"]]
        for name in try streamNames(js: js) {
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var code = jsErrCode(rawValue: 0)
            guard js_GetStreamInfo(&info, js, name, nil, &code) == NATS_OK, let info else { continue }
            defer { jsStreamInfo_Destroy(info) }
            let config = info.pointee.Config.pointee
            let subjects = (0..<Int(config.SubjectsLen)).compactMap { config.Subjects[$0].map { String(cString: $0) } }
            if name.hasPrefix("KV_" + NATSPartitionedReading.bucketName("")) {
                let bucket = String(name.dropFirst(3))
                groups.append([String(bucket.dropFirst(NATSPartitionedReading.bucketName("").count)), bucket])
                continue
            }
            if name.hasPrefix("KV_") { continue }
            let state = info.pointee.State
            streams.append([
                name, subjects.joined(separator: ","), String(state.Msgs), String(state.Bytes), String(state.Consumers),
            ])
            var list: UnsafeMutablePointer<jsConsumerInfoList>?
            guard js_Consumers(&list, js, name, nil, &code) == NATS_OK, let list else { continue }
            defer { jsConsumerInfoList_Destroy(list) }
            for index in 0..<Int(list.pointee.Count) {
                guard let consumer = list.pointee.List[index]?.pointee else { continue }
                consumers.append([
                    String(cString: consumer.Name), name, String(consumer.NumPending), String(consumer.NumAckPending),
                ])
            }
        }
        func table(_ rows: [[String]], empty: String) -> String {
            guard rows.count > 1 else { return empty + "\n" }
            let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            return rows.map { row in
                row.enumerated().map { column, text in
                    column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }.joined(separator: "\n") + "\n"
        }
        return table(streams, empty: "no stream on \(servers)") + "\n" + table(consumers, empty: "no consumer") + "\n"
            + table(groups, empty: "no runner group")
    }

    /// The runner groups on the servers (for a misspelt group's message).
    public static func groupNames(servers: String) throws -> [String] {
        let (connection, js) = try connect(servers, name: "rivulet partitions")
        defer { connection.close() }
        let prefix = "KV_" + NATSPartitionedReading.bucketName("")
        return try streamNames(js: js).filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }
}
