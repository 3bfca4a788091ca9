import CNATS
import Foundation
@_spi(Components) import Pipeline

/// A runner group as `rivulet partitions` shows it: which runner holds which partition (from the
/// group's lease bucket) and how far each partition's consumer is behind (from JetStream).
public struct NATSGroupStatus: Sendable {
    /// One partition: its holder and its consumer's position.
    public struct Partition: Sendable, Equatable {
        /// Its number: its subject is `subject.number`.
        public let number: Int
        /// The runner holding its lease; nil when none does.
        public let runner: String?
        /// Messages of the partition not delivered yet; nil when its consumer does not exist yet.
        public let pending: UInt64?
        /// Messages delivered and not acknowledged yet.
        public let unacknowledged: Int64?
        /// The stream sequence every message up to which is acknowledged.
        public let acknowledgedThrough: UInt64?
        /// When its state was last stored with it (runners under `--state`: each checkpoint),
        /// in nanoseconds since the epoch; nil when it never was.
        public var checkpointedAt: Int64? = nil
        /// When its holder last renewed its lease, in nanoseconds since the epoch; nil when none holds it.
        public var renewedAt: Int64? = nil
        /// Its event-time watermark (milliseconds since the epoch) as its holder's `eventTime` last
        /// saw it, told with the holder's lease; nil without one.
        public var watermark: Int64? = nil
    }

    /// How long a lease lasts unrenewed (its bucket's time to live); a holder renews it every third.
    public var leaseTimeout: Duration = .seconds(10)

    /// The group's name.
    public let group: String
    /// The stream its partitions are read from.
    public let stream: String
    /// The subject the partitions' numbers are added to.
    public let subject: String
    /// The runners alive now (their entries renewed within the lease timeout), sorted.
    public let runners: [String]
    /// Every partition, in order.
    public let partitions: [Partition]

    /// The bucket entry that describes the group (stream, subject, partitions).
    static let descriptionKey = "group"

    static func describe(stream: String, subject: String, partitions: Int) -> String {
        var bytes: [UInt8] = []
        let description: Value = [
            "stream": .string(stream), "subject": .string(subject), "partitions": .int(partitions),
        ]
        JSONSerializer.write(description, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A runner's own lease entry: the watermarks of the partitions it holds (`{"watermarks":
    /// {"3": 1700000000000}}`).
    static func runnerEntry(watermarks: [Int: Int64]) -> String {
        var marks = JSONObject()
        for (partition, mark) in watermarks.sorted(by: { $0.key < $1.key }) {
            marks[String(partition)] = .int(Int(mark))
        }
        var bytes: [UInt8] = []
        JSONSerializer.write(["watermarks": .object(marks)], to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The watermarks a runner's entry tells (none from an older runner, whose entry is its name).
    static func watermarks(inRunnerEntry text: String) -> [Int: Int64] {
        guard case .object(let marks)? = (try? JSONParser.parse(text))?["watermarks"] else { return [:] }
        var watermarks: [Int: Int64] = [:]
        for (partition, mark) in marks {
            if let number = Int(partition), let mark = mark.intValue { watermarks[number] = Int64(mark) }
        }
        return watermarks
    }

    /// The stream, subject and partitions of a group's description (`describe`).
    static func read(_ text: String) -> (stream: String, subject: String, partitions: Int)? {
        guard case .object(let description)? = try? JSONParser.parse(text),
            case .string(let stream)? = description["stream"], case .string(let subject)? = description["subject"],
            let partitions = description["partitions"]?.intValue
        else { return nil }
        return (stream, subject, partitions)
    }

    /// How the group its runners describe (`running`) differs from what a new runner's file says
    /// (`mine`), in words; nil when they agree.
    static func disagreement(_ running: String, _ mine: String) -> String? {
        guard let theirs = read(running), let ours = read(mine) else { return nil }
        guard theirs != ours else { return nil }
        return "reads \(theirs.partitions) partitions of \(theirs.subject) in \(theirs.stream) (as its runners say); "
            + "this file says \(ours.partitions) of \(ours.subject) in \(ours.stream)"
    }

    /// Reads the group `group` from the servers `urls` (comma-separated).
    public static func read(urls: String, group: String) throws -> NATSGroupStatus {
        let endpoint = NATSEndpoint(
            urls: urls.split(separator: ",").map(String.init), credentialsFile: nil, token: nil, user: nil,
            password: nil, lostAfter: .seconds(5))
        let connection = try NATSConnection(endpoint, name: "rivulet partitions", report: { _ in })
        defer { connection.close() }
        guard let js = connection.jetStream else { throw NATSSetupError("\(urls) has no JetStream") }
        var bound: OpaquePointer?
        let status = js_KeyValue(&bound, js, NATSPartitionedReading.bucketName(group))
        guard status == NATS_OK, let bound else {
            throw NATSSetupError(
                "no group '\(group)' on \(urls): no runner of it has started (its bucket "
                    + "\(NATSPartitionedReading.bucketName(group)) does not exist)")
        }
        kvStore_Destroy(bound)
        let entries = try NATSLeaseBucket(
            name: NATSPartitionedReading.bucketName(group), timeToLive: .seconds(10), js: js
        ).entries()
        guard let text = entries[descriptionKey]?.value, let (stream, subject, count) = read(text)
        else {
            throw NATSSetupError("group '\(group)' on \(urls) has no runner now (nothing renewed its description)")
        }
        let runners = entries.keys.filter { $0.hasPrefix("runners.") }.map { String($0.dropFirst("runners.".count)) }
        var toldWatermarks: [String: [Int: Int64]] = [:]
        for runner in runners {
            toldWatermarks[runner] = watermarks(inRunnerEntry: entries[PartitionLeases.runnerKey(runner)]?.value ?? "")
        }
        let stored = try storedPartitions(group: group, js: js)
        let timeToLive = leaseTimeToLive(group: group, js: js)
        let partitions = (0..<count).map { number in
            let lease = entries[PartitionLeases.partitionKey(number)]
            let owner = lease?.value
            var info: UnsafeMutablePointer<jsConsumerInfo>?
            var code = jsErrCode(rawValue: 0)
            // Under --state a partition is read through the consumer its holder made when it took it.
            let consumer = stored[number]?.consumer ?? "\(group)-p\(number)"
            let found = js_GetConsumerInfo(&info, js, stream, consumer, nil, &code) == NATS_OK
            defer { jsConsumerInfo_Destroy(info) }
            // A consumer made at a takeover starts past the stored floor and has acknowledged
            // nothing yet: its own floor reads 0, the partition's is the stored one.
            let consumerFloor = found ? info?.pointee.AckFloor.Stream : nil
            let storedFloor = stored[number]?.floor
            let floor = consumerFloor.map { max($0, storedFloor ?? 0) } ?? storedFloor
            let held = owner?.isEmpty == false
            return Partition(
                number: number, runner: held ? owner : nil,
                pending: found ? info?.pointee.NumPending : nil,
                unacknowledged: found ? info?.pointee.NumAckPending : nil,
                acknowledgedThrough: floor,
                checkpointedAt: stored[number]?.time, renewedAt: held ? lease?.created : nil,
                watermark: held ? owner.flatMap { toldWatermarks[$0]?[number] } : nil)
        }
        var read = NATSGroupStatus(
            group: group, stream: stream, subject: subject, runners: runners.sorted(), partitions: partitions)
        if let timeToLive { read.leaseTimeout = timeToLive }
        return read
    }

    /// The lease bucket's time to live: how long a lease lasts unrenewed.
    private static func leaseTimeToLive(group: String, js: OpaquePointer) -> Duration? {
        var store: OpaquePointer?
        guard js_KeyValue(&store, js, NATSPartitionedReading.bucketName(group)) == NATS_OK, let store else {
            return nil
        }
        defer { kvStore_Destroy(store) }
        var status: OpaquePointer?
        guard kvStore_Status(&status, store) == NATS_OK, let status else { return nil }
        defer { kvStatus_Destroy(status) }
        let nanoseconds = kvStatus_TTL(status)
        return nanoseconds > 0 ? .nanoseconds(nanoseconds) : nil
    }

    /// What the runner column says of a holder whose lease was not renewed when it should have
    /// been (a runner killed, or stopped): how long ago it was, and when the lease expires.
    func staleness(of partition: Partition, now: Date) -> String? {
        guard partition.runner != nil, let renewed = partition.renewedAt, renewed > 0 else { return nil }
        let timeout = Double(leaseTimeout.components.seconds) + Double(leaseTimeout.components.attoseconds) / 1e18
        let since = now.timeIntervalSince1970 - Double(renewed) / 1e9
        // Renewed every third of the timeout: a holder more than a round and a second late is not renewing.
        guard since > timeout / 3 + 1 else { return nil }
        return "not renewed for \(Int(since))s, expires in \(max(0, Int((timeout - since).rounded(.up))))s"
    }

    /// When each partition's state was last stored, and the consumer it is read through, from
    /// the group's state bucket (none when its runners keep no state).
    /// What each partition's last holder stored, from the group's state bucket (none without
    /// --state). Throws when the bucket is there but cannot be read: a floor shown as "-" because
    /// a read timed out would look like a partition never acknowledged.
    private static func storedPartitions(group: String, js: OpaquePointer) throws -> [Int: (
        time: Int64, consumer: String?, floor: UInt64?
    )] {
        var store: OpaquePointer?
        let opened = js_KeyValue(&store, js, GroupPartitionStates.bucketName(group))
        guard opened == NATS_OK, let store else {
            if opened == NATS_NOT_FOUND { return [:] }
            throw NATSError(opened, doing: "cannot open the state bucket of group '\(group)'")
        }
        kvStore_Destroy(store)
        let bucket = try NATSLeaseBucket(name: GroupPartitionStates.bucketName(group), timeToLive: .zero, js: js)
        var stored: [Int: (time: Int64, consumer: String?, floor: UInt64?)] = [:]
        for (key, entry) in try bucket.entries() where key.hasPrefix("partitions.") {
            guard let partition = Int(key.dropFirst("partitions.".count)) else { continue }
            let parsed = try? JSONParser.parse(entry.value)
            let floor = parsed?["position"]?["floor"]?.intValue.flatMap { $0 >= 0 ? UInt64($0) : nil }
            stored[partition] = (entry.created, parsed?["consumer"]?.stringValue, floor)
        }
        return stored
    }

    private static func row(_ columns: String...) -> String {
        let widths = [9, 34, 7, 7, 13, 24]
        return zip(columns, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }
            .joined(separator: "  ") + "  " + columns[6]
    }

    /// A watermark as a UTC time: `2023-11-14T22:43:49.000Z`.
    private static func time(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// How long ago `nanoseconds` (since the epoch) was, in whole seconds: `3s`.
    private static func age(_ nanoseconds: Int64, now: Date) -> String {
        "\(max(0, Int(now.timeIntervalSince1970 - Double(nanoseconds) / 1e9)))s"
    }

    /// A table: one line a partition, then the runners with how many partitions each holds. The
    /// last columns say each partition's watermark as its holder's `eventTime` last told it (`-`:
    /// none) and how long ago its state was stored (`-`: never, no `--state`).
    public func text(now: Date = Date()) -> String {
        var lines = [
            "group \(group): stream \(stream), subjects \(subject).0 to \(subject).\(partitions.count - 1), "
                + "\(runners.count) runner\(runners.count == 1 ? "" : "s")",
            Self.row("partition", "runner", "pending", "unacked", "acked through", "watermark", "checkpoint"),
        ]
        for partition in partitions {
            lines.append(
                Self.row(
                    String(partition.number),
                    partition.runner.map { runner in
                        staleness(of: partition, now: now).map { "\(runner) (\($0))" } ?? runner
                    }
                        ?? "-", partition.pending.map(String.init) ?? "-",
                    partition.unacknowledged.map(String.init) ?? "-",
                    partition.acknowledgedThrough.map(String.init) ?? "-",
                    partition.watermark.map(Self.time) ?? "-",
                    partition.checkpointedAt.map { Self.age($0, now: now) } ?? "-"
                ))
        }
        for runner in runners {
            let held = partitions.filter { $0.runner == runner }.map { String($0.number) }
            lines.append(
                "runner \(runner): \(held.isEmpty ? "no partitions" : "partitions " + held.joined(separator: ","))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
