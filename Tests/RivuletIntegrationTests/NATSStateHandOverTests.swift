import BinaryTestSupport
import CNATS
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// Runners of a group under `--state` over a real nats-server: each partition's state (its
/// chain in `partitionBy`, and which messages that state holds) is stored in JetStream at every
/// checkpoint and moves with the partition, so a per-key event-time aggregation over runners that
/// are killed, stopped past their lease and that join gives exactly one right result per key and
/// window.
final class NATSStateHandOverTests: NATSServerOrClusterTestCase {
    /// How many events of how many keys, how far apart in event time, over how many partitions.
    private struct Scale {
        let events: Int
        let keys: Int
        let partitions: Int
        let millisecondsApart: Int
        /// Characters of padding in each event (a field no operator reads).
        var padding = 0

        /// 6,000 events of 40 keys, one a second: 4,000 minutes of a key.
        static let small = Scale(events: 6000, keys: 40, partitions: 4, millisecondsApart: 1000)
        /// 200,000 events of 2,000 keys, 3 ms apart: 20,000 minutes of a key, ten events each.
        static let full = Scale(events: 200_000, keys: 2000, partitions: 12, millisecondsApart: 3)
        /// The full scale with events of about 1 KB. nats-server 2.9.10 (before 2.9.15) counts a
        /// filtered consumer's pending messages again on every delivery while the consumer reads
        /// the first half of the store's newest 8 MB block behind a producer: with events of
        /// 100 bytes (70,000 a block) the producer slowed to 60 a second and gave up; with 1 KB
        /// events a block holds 8,000 and a reader is soon past it.
        static let fullOfKilobyteEvents = Scale(
            events: 200_000, keys: 2000, partitions: 12, millisecondsApart: 3, padding: 900)
    }

    /// A group's lease: 2 s on one server with the small scale (so that the faults play out
    /// quickly), 10 s (the default, and what the docs advise) on a cluster, or under the load of
    /// the full scale, where a lease round's JetStream calls can wait behind the publishes.
    private static func leaseSeconds(_ scale: Scale, replicas: Int) -> Int {
        replicas == 1 && scale.events <= 10_000 ? 2 : 10
    }

    /// `scale`'s events in three files (published one after the other), and a fourth with a last
    /// event per key an hour later that closes every window; returns the truth per key and minute.
    private func writeEvents(_ scale: Scale) throws -> [String: (count: Int, total: Int)] {
        var truth: [String: (count: Int, total: Int)] = [:]
        var files = ["", "", ""]
        let pad = scale.padding > 0 ? ",\"pad\":\"\(String(repeating: "x", count: scale.padding))\"" : ""
        for id in 0..<scale.events {
            let (key, time, value) = ("k\(id % scale.keys)", id * scale.millisecondsApart, id % 7)
            files[id * 3 / scale.events] +=
                "{\"id\":\(id),\"key\":\"\(key)\",\"t\":\(time),\"v\":\(value)\(pad)}\n"
            let window = "\(key) \(time / 60000 * 60000)"
            truth[window, default: (0, 0)].count += 1
            truth[window, default: (0, 0)].total += value
        }
        for (index, text) in files.enumerated() {
            try text.write(toFile: path("events-\(index).jsonl"), atomically: true, encoding: .utf8)
        }
        let closing = scale.events * scale.millisecondsApart + 3_600_000
        let last = (0..<scale.keys).map {
            "{\"id\":\(scale.events + $0),\"key\":\"k\($0)\",\"t\":\(closing),\"v\":0}\n"
        }
        try last.joined().write(toFile: path("events-3.jsonl"), atomically: true, encoding: .utf8)
        return truth
    }

    /// Publishes one file of events to `events.P` (partitions by key), as a producer does.
    private func publish(_ index: Int, _ scale: Scale) throws {
        let published = try run(
            """
            source: { fixture: \(path("events-\(index).jsonl")) }
            sink: { nats: { url: "\(natsURL)", subject: events, partitionBy: .key, partitions: \(scale.partitions), msgId: "{{ .id }}", stream: EVENTS } }
            """)
        XCTAssertEqual(published.status, 0, published.stderr)
    }

    /// A runner of the group `minutes` with a state file of its own: count and sum per key per
    /// event-time minute, each partition with its own watermark, into the stream OUT with an id
    /// per key and minute.
    /// The streams (and the group's buckets) have `replicas` copies. Leases last 2 s on one
    /// server with a light load, 10 s (the default) otherwise.
    private func runner(_ name: String, _ scale: Scale, replicas: Int) throws -> ChildProcess {
        let file = path("runner-\(name).yaml")
        try """
        source: { nats: { url: "\(natsURL)", stream: EVENTS, subject: events, group: minutes, partitions: \(scale.partitions), leaseTimeout: \(Self.leaseSeconds(scale, replicas: replicas))s, create: true, replicas: \(replicas) } }
        ops:
          - partitionBy:
              key: .key
              partitions: \(scale.partitions)
              ops:
                - eventTime: { time: .t, maxDelay: 5s }
                - aggregate: { by: .key, every: 1m, fields: { n: count, total: { sum: .v } } }
        sink: { nats: { url: "\(natsURL)", subject: out, stream: OUT, create: true, msgId: "{{ .key }}-{{ .start }}" } }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        // At full scale, a checkpoint every 5 s: with one a second (the default), 12 partitions'
        // consumers read while they are published keep nats-server 2.9 busy counting what each
        // has pending, and the publisher gave up (the docs' "Many partitions read while they are
        // written").
        let interval = scale.events > 10_000 ? ["--checkpoint-interval", "5s"] : []
        return try startRivulet(
            ["run", "--state", path("\(name).db")] + interval + [file], output: .null, error: .pipe)
    }

    func testPartitionsOfAKilledAStoppedAndAJoiningRunnerCarryTheirStateSoEachMinuteIsCountedOnce() throws {
        server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
        try countEveryMinuteOnce(.small) {
            try killedAndJoining(replicas: 1) { first, third in
                // The first is stopped while it reads the third third, past its lease: the third
                // takes its partitions from what it stored; woken, the first finds them lost (its
                // next write of their state is refused), drops what it held of them, and later
                // takes its share back.
                first.send(SIGSTOP)
                waitForStderr(third, containing: "holding partitions 0,1,2,3", seconds: 20)
                first.send(SIGCONT)
                waitForStderr(third, containing: "handed over", seconds: 20)
            }
        }
    }

    /// The same with the server restarted while the third third is read (the first runner not
    /// stopped): the runners reconnect, take their partitions back from what they stored, and
    /// each minute is still counted once.
    func testARunnerGroupOverAServerRestartedWhileItReadsCountsEachMinuteOnce() throws {
        let store = directory.appendingPathComponent("js").path
        server = try NATSServer(storeDirectory: store)
        try countEveryMinuteOnce(.small) {
            try killedAndJoining(replicas: 1) { _, _ in
                let port = server?.port
                server?.stop()
                Thread.sleep(forTimeInterval: 1)
                server = try NATSServer(storeDirectory: store, port: port)
                print("nats: server restarted")
            }
        }
    }

    /// Deliveries of a partition's consumer that never reach its reader (here another client's
    /// pull request takes them, as a request lost with a server or a cluster node does) would
    /// come again only after ackWait, behind newer messages, and be late for their windows: the
    /// reader sees the gap in the consumer's delivery numbers, gives back what came after it,
    /// and the partition is read again, in order, from its stored state.
    func testAPartitionsReaderMissingDeliveriesReadsItAgainInOrderSoEachMinuteIsCountedOnce() throws {
        server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
        try countEveryMinuteOnce(.small) {
            let only = try runner("a", .small, replicas: 1)
            waitForStderr(only, containing: "holding partitions 0,1,2,3", seconds: 20)
            try publish(0, .small)
            let thief = try DeliveryThief(url: natsURL, stream: "EVENTS", consumerNamedLike: "minutes-p0-")
            defer { thief.close() }
            try thief.ask(batch: 5)
            try publish(1, .small)
            XCTAssertGreaterThan(thief.taken(waitingUpTo: 10), 0, "the thief took deliveries of partition 0")
            waitForStderr(only, containing: "of its consumer never arrived", seconds: 20)
            try publish(2, .small)
            return [only]
        }
    }

    /// On a three-node cluster (every stream and bucket with three copies) that loses the node
    /// leading partition 0's consumer while the third third is read: its reader meets a consumer
    /// without a leader until the two others elect one, and each minute is still counted once.
    func testOnAThreeNodeClusterLosingAPartitionsConsumerLeaderEachMinuteIsCountedOnce() throws {
        let started = try NATSCluster(directory: directory)
        cluster = started
        try countEveryMinuteOnce(.small) {
            try killedAndJoining(replicas: 3) { _, _ in
                let leader = started.consumerLeader(stream: "EVENTS", namedLike: "minutes-p0-") ?? 0
                started.kill(node: leader)
                print("nats: killed cluster node n\(leader), the leader of partition 0's consumer")
            }
        }
    }

    /// At full scale (200,000 events of 2,000 keys over 12 partitions): three runners, one killed
    /// with SIGKILL while it reads the second third, a fourth joining, and one stopped past its
    /// lease while the last third is published, then woken.
    func testAtFullScaleThreeRunnersOneKilledOneJoiningAndOneStoppedCountEachMinuteOnce() throws {
        server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
        try countEveryMinuteOnce(.fullOfKilobyteEvents) {
            try threeKilledJoiningAndStopped(.fullOfKilobyteEvents, replicas: 1)
        }
    }

    /// The same at full scale on a three-node cluster (every stream and bucket with three copies)
    /// that loses the node leading the lease bucket while the last third is published and a
    /// runner is stopped: the two other nodes carry the group on.
    func testAtFullScaleOnAThreeNodeClusterLosingANodeEachMinuteIsCountedOnce() throws {
        let started = try NATSCluster(directory: directory)
        cluster = started
        try countEveryMinuteOnce(.full) {
            try threeKilledJoiningAndStopped(.full, replicas: 3) {
                let leader = started.streamLeader("KV_rivulet-leases-minutes") ?? 0
                started.kill(node: leader)
                print("nats: killed cluster node n\(leader), the lease bucket's leader")
            }
        }
    }

    /// Under --state a group's partitions are partitionBy's: other partitions are an error at
    /// partitionBy's line, before anything connects.
    func testPartitionByWithOtherPartitionsThanItsGroupIsAnError() throws {
        let file = path("mismatch.yaml")
        try """
        source: { nats: { url: "nats://127.0.0.1:1", stream: EVENTS, subject: events, group: minutes, partitions: 4 } }
        ops:
          - partitionBy:
              key: .key
              partitions: 8
              ops:
                - aggregate: { by: .key, every: 1m, fields: { n: count } }
        sink: stdout
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runRivulet(["run", "--state", path("m.db"), file])
        XCTAssertEqual(result.status, 2, result.stderr)
        assertContains(
            result.stderr,
            "mismatch.yaml:5:19: error: after the nats source of group minutes each partition is the group's: "
                + "partitions must be 4 (the source's), not 8")
    }

    /// A row of `rivulet partitions` naming a runner, whose state was stored less than a minute ago.
    private static func isHeldWithARecentCheckpoint(_ row: Substring) -> Bool {
        let columns = row.split(separator: " ")
        let age = columns.last.map(String.init) ?? ""
        return columns.count > 1 && columns[1] != "-" && age.hasSuffix("s")
            && Int(age.dropLast()).map { $0 < 60 } == true
    }

    private func streamExists(_ stream: String) -> Bool {
        (try? withJetStream { js in
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var code = jsErrCode(rawValue: 0)
            defer { jsStreamInfo_Destroy(info) }
            return js_GetStreamInfo(&info, js, stream, nil, &code) == NATS_OK
        }) ?? false
    }

    /// Two runners, one killed with SIGKILL while it reads the second third, a third joining, and
    /// `fault` while they read the third third; returns the two that run on.
    private func killedAndJoining(
        replicas: Int, fault: (_ first: ChildProcess, _ third: ChildProcess) throws -> Void
    ) throws -> [ChildProcess] {
        let first = try runner("a", .small, replicas: replicas)
        let second = try runner("b", .small, replicas: replicas)
        waitForStderr(first, containing: "holding partitions")
        waitForStderr(second, containing: "holding partitions")
        try publish(0, .small)
        try publish(1, .small)
        // Killed while it reads the second third: what it did since its last checkpoint is lost
        // with it, and what it fetched is not acknowledged.
        Thread.sleep(forTimeInterval: 0.3)
        second.send(SIGKILL)
        _ = second.wait()
        // Its partitions go to the first once their leases expired, from the state it stored.
        waitForStderr(first, containing: "holding partitions 0,1,2,3", seconds: 20)
        // A third joins: the first hands two partitions over, with a checkpoint of their state.
        let third = try runner("c", .small, replicas: replicas)
        waitForStderr(third, containing: "holding partitions", seconds: 20)
        try publish(2, .small)
        try fault(first, third)
        return [first, third]
    }

    /// At full scale: three runners, one killed with SIGKILL once the second third is published,
    /// a fourth joining, and one stopped past its lease while the last third is published (on a
    /// process of its own), with `fault` then, and woken; returns the three that run on.
    private func threeKilledJoiningAndStopped(
        _ scale: Scale, replicas: Int, fault: () throws -> Void = {}
    ) throws -> [ChildProcess] {
        let lease = Double(Self.leaseSeconds(scale, replicas: replicas))
        let runners = try ["a", "b", "c"].map { try runner($0, scale, replicas: replicas) }
        for runner in runners { waitForStderr(runner, containing: "holding partitions", seconds: 30) }
        try publish(0, scale)
        try publish(1, scale)
        runners[1].send(SIGKILL)
        _ = runners[1].wait()
        // Its partitions go to the two others once their leases expired.
        Thread.sleep(forTimeInterval: lease + 1)
        let fourth = try runner("d", scale, replicas: replicas)
        waitForStderr(fourth, containing: "holding partitions", seconds: 30)
        let publishing = try startPublishing(2, scale)
        Thread.sleep(forTimeInterval: 0.5)
        runners[0].send(SIGSTOP)
        try fault()
        XCTAssertEqual(publishing.wait(), .exited(0))
        Thread.sleep(forTimeInterval: lease + 2)
        runners[0].send(SIGCONT)
        return [runners[0], runners[2], fourth]
    }

    /// Publishing one file of events, on a process of its own.
    private func startPublishing(_ index: Int, _ scale: Scale) throws -> ChildProcess {
        let file = path("publish-\(index).yaml")
        try """
        source: { fixture: \(path("events-\(index).jsonl")) }
        sink: { nats: { url: "\(natsURL)", subject: events, partitionBy: .key, partitions: \(scale.partitions), msgId: "{{ .id }}", stream: EVENTS } }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return try startRivulet(["run", file], output: .null, error: .null)
    }

    /// `scenario` (runners started, the first three files published, faults) and then the
    /// closing events: OUT holds one right result per key and minute, and `rivulet partitions`
    /// shows every partition held with a recent checkpoint. The runners `scenario` returns are
    /// stopped at the end.
    private func countEveryMinuteOnce(_ scale: Scale, scenario: () throws -> [ChildProcess]) throws {
        let truth = try writeEvents(scale)
        let replicas = cluster == nil ? 1 : 3
        // The runners make the stream (with its copies); OUT is made first by a reader that
        // does too (a nats sink makes a stream with one copy).
        let maker = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: OUT, subject: out, durable: check, create: true, replicas: \(replicas) } }
            sink: { file: \(path("unused.jsonl")) }
            """)
        let made = Date(timeIntervalSinceNow: 20)
        while !streamExists("OUT"), Date() < made { Thread.sleep(forTimeInterval: 0.1) }
        _ = stop(maker)
        let running = try scenario()
        try publish(3, scale)
        let deadline = Date(timeIntervalSinceNow: scale.events > 10_000 ? 300 : 60)
        while (try? storedMessages("OUT")) ?? 0 < UInt64(truth.count), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
        }
        // Anything more would come now.
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(try storedMessages("EVENTS"), UInt64(scale.events + scale.keys), "every event was published")
        XCTAssertEqual(try storedMessages("OUT"), UInt64(truth.count), "one result per key and minute")
        // `rivulet partitions` shows when each partition's state was stored last (a cluster that
        // lost a node may take a few rounds to settle its leases).
        var rows: [Substring] = []
        var shown = (status: Int32(-1), stdout: "", stderr: "")
        let settled = Date(timeIntervalSinceNow: 30)
        repeat {
            let result = try runRivulet(["partitions", "--nats", natsURL, "--group", "minutes"])
            shown = (result.status, result.stdout, result.stderr)
            rows = shown.stdout.split(separator: "\n").filter { $0.first?.isNumber == true }
            if shown.status == 0, rows.count == scale.partitions, rows.allSatisfy(Self.isHeldWithARecentCheckpoint) {
                break
            }
            Thread.sleep(forTimeInterval: 1)
        } while Date() < settled
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertEqual(rows.count, scale.partitions, shown.stdout)
        for row in rows { XCTAssertTrue(Self.isHeldWithARecentCheckpoint(row), "\(row)") }
        for process in running {
            let (status, stderr) = stop(process)
            XCTAssertEqual(status, 143, stderr)
        }
        let reader = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: OUT, subject: out, durable: check } }
            sink: { file: \(path("results.jsonl")) }
            """)
        waitForLines("results.jsonl", atLeast: truth.count)
        _ = stop(reader)
        var results: [String: (count: Int, total: Int)] = [:]
        for line in lines("results.jsonl") {
            let value = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let window = "\(value["key"] as? String ?? "?") \(value["start"] as? Int ?? -1)"
            XCTAssertNil(results[window], "\(window) written twice")
            results[window] = (value["n"] as? Int ?? -1, value["total"] as? Int ?? -1)
        }
        let wrong = truth.filter { window, expected in
            results[window].map { $0.count != expected.count || $0.total != expected.total } ?? true
        }
        XCTAssertEqual(results.count, truth.count)
        XCTAssertTrue(
            wrong.isEmpty,
            "\(wrong.count) minutes wrong or missing, such as "
                + wrong.keys.sorted().prefix(5).map {
                    "\($0): \(results[$0].map { "\($0)" } ?? "none") not \(truth[$0]!)"
                }
                .joined(separator: "; "))
    }
}

/// Another client taking deliveries of a consumer with a pull request of its own, and never
/// acknowledging them.
private final class DeliveryThief {
    private var connection: OpaquePointer?
    private var subscription: OpaquePointer?
    private var inbox: UnsafeMutablePointer<natsInbox>?
    private let subject: String

    /// Connects and finds the consumer of `stream` whose name starts with `prefix`.
    init(url: String, stream: String, consumerNamedLike prefix: String) throws {
        guard natsConnection_ConnectTo(&connection, url) == NATS_OK, let connection else {
            throw CocoaError(.fileReadUnknown)
        }
        var js: OpaquePointer?
        guard natsConnection_JetStream(&js, connection, nil) == NATS_OK else { throw CocoaError(.fileReadUnknown) }
        defer { jsCtx_Destroy(js) }
        var list: UnsafeMutablePointer<jsConsumerNamesList>?
        var code = jsErrCode(rawValue: 0)
        guard js_ConsumerNames(&list, js, stream, nil, &code) == NATS_OK, let list else {
            throw CocoaError(.fileReadUnknown)
        }
        defer { jsConsumerNamesList_Destroy(list) }
        let names = (0..<Int(list.pointee.Count)).compactMap { list.pointee.List[$0].map { String(cString: $0) } }
        guard let name = names.first(where: { $0.hasPrefix(prefix) }) else {
            throw CocoaError(
                .fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no consumer like \(prefix) in \(names)"])
        }
        subject = "$JS.API.CONSUMER.MSG.NEXT.\(stream).\(name)"
        guard natsInbox_Create(&inbox) == NATS_OK, let inbox,
            natsConnection_SubscribeSync(&subscription, connection, inbox) == NATS_OK
        else { throw CocoaError(.fileReadUnknown) }
    }

    /// Sends one pull request for `batch` messages, waiting up to 10 s on the server.
    func ask(batch: Int) throws {
        let request = "{\"batch\":\(batch),\"expires\":10000000000}"
        guard natsConnection_PublishRequestString(connection, subject, inbox, request) == NATS_OK,
            natsConnection_Flush(connection) == NATS_OK
        else { throw CocoaError(.fileWriteUnknown) }
    }

    /// How many messages came to the request, once one came (or `seconds` passed) and the
    /// rest had a second to follow.
    func taken(waitingUpTo seconds: Int64) -> Int {
        var count = 0
        var wait = seconds * 1000
        while true {
            var message: OpaquePointer?
            guard natsSubscription_NextMsg(&message, subscription, wait) == NATS_OK, let message else { return count }
            // A status message (no data, a header like 408) ends the request; it is no delivery.
            if natsMsg_GetDataLength(message) > 0 { count += 1 }
            natsMsg_Destroy(message)
            wait = 1000
        }
    }

    func close() {
        natsSubscription_Destroy(subscription)
        natsConnection_Destroy(connection)
        natsInbox_Destroy(inbox)
    }
}
