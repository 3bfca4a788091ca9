import BinaryTestSupport
import CNATS
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// Runners of a group dividing the partitions of a stream over a real nats-server: each
/// partition read by one runner at a time, a runner killed with SIGKILL losing its partitions to
/// the others after the lease timeout, and nothing lost.
final class NATSGroupTests: OneNATSServerTestCase {
    /// Publishes orders `ids` of 40 customers to orders.P (8 partitions) as the docs' producer does.
    private func publishPartitioned(_ ids: ClosedRange<Int>) throws {
        let lines = ids.map { "{\"id\":\($0),\"customer\":\"c\($0 % 40)\"}" }.joined(separator: "\n")
        let file = path("orders-\(ids.lowerBound).jsonl")
        try (lines + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let published = try run(
            """
            source: { fixture: \(file) }
            sink: { nats: { url: "\(natsURL)", subject: orders, partitionBy: .customer, partitions: 8, msgId: "{{ .id }}", stream: ORDERS, create: true } }
            """)
        XCTAssertEqual(published.status, 0, published.stderr)
    }

    private func runner(_ output: String, leaseTimeout: String = "3s") throws -> ChildProcess {
        try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: orders, group: totals, partitions: 8, leaseTimeout: \(leaseTimeout), metadata: meta } }
            ops:
              - map: { id: .id, customer: .customer, subject: .meta.subject }
            sink: { file: \(path(output)) }
            """)
    }

    /// Waits (up to 30 s) until the group (`totals`), as `rivulet partitions` reads it, is as `expected`.
    private func waitForGroup(
        _ what: String, group: String = "totals", _ expected: (NATSGroupStatus) -> Bool
    ) throws {
        let deadline = Date(timeIntervalSinceNow: 30)
        var last: NATSGroupStatus?
        repeat {
            last = try? NATSGroupStatus.read(urls: natsURL, group: group)
            if let last, expected(last) { return }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        XCTFail("not within 30 s: \(what); the group was \(last?.text() ?? "unreadable")")
    }

    /// Whether two runners are alive and each holds four of the eight partitions.
    private func dividedInTwo(_ status: NATSGroupStatus) -> Bool {
        let holders = Dictionary(grouping: status.partitions.compactMap(\.runner), by: { $0 })
        return status.runners.count == 2 && holders.count == 2 && holders.values.allSatisfy { $0.count == 4 }
    }

    /// The subjects (partitions) in a runner's output.
    private func subjects(_ output: String) -> Set<String> {
        Set(
            lines(output).compactMap { line in
                guard let start = line.range(of: "\"subject\":\"") else { return nil }
                return String(line[start.upperBound...].prefix(while: { $0 != "\"" }))
            })
    }

    func testTwoRunnersDivideThePartitionsAndAKilledOnesAreTakenOverWithNothingLost() throws {
        try publishPartitioned(1...1)  // creates the stream
        let first = try runner("a.jsonl")
        let second = try runner("b.jsonl")
        // Rounds every second; waits for both runners to hold four partitions each (a fixed wait
        // of five seconds once saw the second runner start too late on a loaded machine).
        try waitForGroup("two runners holding four partitions each", dividedInTwo)
        try publishPartitioned(2...2000)
        let deadline = Date(timeIntervalSinceNow: 30)
        while Set(ids("a.jsonl") + ids("b.jsonl")).count < 2000, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertEqual(Set(ids("a.jsonl") + ids("b.jsonl")), Set(1...2000))
        let (a, b) = (subjects("a.jsonl"), subjects("b.jsonl"))
        XCTAssertEqual(a.count, 4, "a read \(a.sorted())")
        XCTAssertEqual(b.count, 4, "b read \(b.sorted())")
        XCTAssertTrue(a.isDisjoint(with: b), "a partition is read by one runner: \(a.sorted()) \(b.sorted())")
        // What `rivulet partitions` shows: 8 partitions, each held, 4 by each runner, nothing pending.
        let shown = try runRivulet(["partitions", "--nats", natsURL, "--group", "totals"])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        let rows = shown.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(rows.first, "group totals: stream ORDERS, subjects orders.0 to orders.7, 2 runners")
        let partitionRows = rows.filter { $0.first?.isNumber == true }
        XCTAssertEqual(partitionRows.count, 8, shown.stdout)
        for row in partitionRows {
            let columns = row.split(separator: " ")
            XCTAssertEqual(columns.count, 7, row)
            XCTAssertEqual(columns[5], "-", "no watermark without eventTime: \(row)")
            XCTAssertEqual(columns[6], "-", "no state stored without --state: \(row)")
            XCTAssertNotEqual(columns[1], "-", "held: \(row)")
            XCTAssertEqual(columns[2], "0", "nothing pending: \(row)")
        }
        let runnerRows = rows.filter { $0.hasPrefix("runner ") }
        XCTAssertEqual(runnerRows.count, 2, shown.stdout)
        for row in runnerRows { XCTAssertEqual(row.split(separator: ",").count, 4, row) }
        // The second runner dies: its partitions go to the first once their leases expired.
        second.send(SIGKILL)
        _ = second.wait()
        try publishPartitioned(2001...3000)
        let later = Date(timeIntervalSinceNow: 30)
        while Set(ids("a.jsonl") + ids("b.jsonl")).count < 3000, Date() < later { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertEqual(Set(ids("a.jsonl") + ids("b.jsonl")), Set(1...3000), "nothing lost")
        XCTAssertEqual(subjects("a.jsonl").count, 8, "the first runner took over every partition")
        let (status, stderr) = stop(first)
        XCTAssertEqual(status, 143, stderr)
        assertContains(stderr, "group totals: holding partitions")
    }

    /// A runner stopped by SIGTERM lets go of its leases once its messages are settled: the other
    /// takes its partitions at its next round, long before the leases would have expired.
    func testARunnerStoppedBySIGTERMHandsItsPartitionsOverAtOnce() throws {
        try publishPartitioned(1...1)
        let first = try runner("a.jsonl", leaseTimeout: "9s")
        let second = try runner("b.jsonl", leaseTimeout: "9s")
        // Rounds every 3 s: the first rounds divide the partitions (a surplus is let go of at
        // the holder's next round).
        try waitForGroup("two runners holding four partitions each", dividedInTwo)
        try publishPartitioned(2...400)
        let deadline = Date(timeIntervalSinceNow: 30)
        while Set(ids("a.jsonl") + ids("b.jsonl")).count < 400, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertEqual(subjects("a.jsonl").count + subjects("b.jsonl").count, 8)
        let stopped = Date()
        let (status, stderr) = stop(second)
        XCTAssertEqual(status, 143, stderr)
        try publishPartitioned(401...800)
        let later = Date(timeIntervalSinceNow: 25)
        while Set(ids("a.jsonl") + ids("b.jsonl")).count < 800, Date() < later { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertEqual(Set(ids("a.jsonl") + ids("b.jsonl")), Set(1...800), "nothing lost")
        XCTAssertLessThan(
            Date().timeIntervalSince(stopped), 7, "taken over at the next round (3 s), not after the lease (9 s)")
        XCTAssertEqual(subjects("a.jsonl").count, 8)
        _ = stop(first)
    }

    /// A runner stopped (SIGSTOP) past its lease wakes to find its partitions held by another:
    /// what its pending fetches took in while it was stopped goes back to the stream for the new
    /// holder (fencing), so it writes nothing of the partitions it lost; nothing is lost or
    /// written twice, and it takes its share again.
    func testARunnerStalledPastItsLeaseWritesNothingOfThePartitionsItLost() throws {
        try publishPartitioned(1...1)
        // A publisher already running, so orders go out within its poll (50 ms) of being written.
        let feed = path("feed.jsonl")
        XCTAssertTrue(FileManager.default.createFile(atPath: feed, contents: nil))
        let publisher = try startConsumer(
            """
            source: { file: { path: \(feed), follow: true, poll: 50ms } }
            sink: { nats: { url: "\(natsURL)", subject: orders, partitionBy: .customer, partitions: 8, msgId: "{{ .id }}", stream: ORDERS } }
            """)
        defer { _ = stop(publisher) }
        func feedOrders(_ ids: ClosedRange<Int>) throws {
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: feed))
            defer { try? handle.close() }
            handle.seekToEndOfFile()
            handle.write(Data(ids.map { "{\"id\":\($0),\"customer\":\"c\($0 % 40)\"}\n" }.joined().utf8))
        }
        func waitForAll(_ count: Int) {
            let deadline = Date(timeIntervalSinceNow: 30)
            while Set(ids("a.jsonl") + ids("b.jsonl")).count < count, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        let first = try runner("a.jsonl", leaseTimeout: "2s")
        let second = try runner("b.jsonl", leaseTimeout: "2s")
        defer { if first.exited() == nil { first.send(SIGKILL) } }
        // Rounds every 0.67 s.
        try waitForGroup("two runners holding four partitions each", dividedInTwo)
        try feedOrders(2...400)
        waitForAll(400)
        XCTAssertEqual(subjects("a.jsonl").count, 4, "the first holds half the partitions")
        // Its acknowledgements applied (else what it wrote would be delivered again after ackWait).
        try waitForGroup("every order acknowledged") { status in
            status.partitions.allSatisfy { $0.pending == 0 && $0.unacknowledged == 0 }
        }
        first.send(SIGSTOP)
        // Its readers' pending fetches take in orders of its partitions while it is stopped.
        try feedOrders(401...800)
        // The second takes every partition once the first's leases expired (the server may take up
        // to twice the time to live, 2 s, to expire them) and reads what the first did not take in;
        // then the first wakes, and its first batches meet the fence.
        try waitForGroup("the second holds every partition and read what was left") { status in
            Set(status.partitions.map(\.runner)).count == 1
                && status.partitions.allSatisfy { $0.runner != nil && $0.pending == 0 }
        }
        first.send(SIGCONT)
        let woken = Date()
        waitForAll(800)
        XCTAssertLessThan(
            Date().timeIntervalSince(woken), 15, "what the first took in went back at once, not after ackWait (30 s)")
        let written = ids("a.jsonl") + ids("b.jsonl")
        XCTAssertEqual(Set(written), Set(1...800), "nothing lost")
        XCTAssertEqual(written.count, 800, "nothing written twice")
        XCTAssertEqual(
            ids("a.jsonl").filter { $0 > 400 }, [], "the stalled runner wrote orders of partitions it no longer held")
        // Awake again, it takes its share back from the second and reads new orders.
        try waitForGroup("the first holding its share again", dividedInTwo)
        try feedOrders(801...1200)
        waitForAll(1200)
        XCTAssertEqual(Set(ids("a.jsonl") + ids("b.jsonl")), Set(1...1200))
        XCTAssertFalse(ids("a.jsonl").filter { $0 > 800 }.isEmpty, "the first reads again")
        let (status, stderr) = stop(first)
        XCTAssertEqual(status, 143, stderr)
        assertContains(stderr, "lost partition")
        _ = stop(second)
    }

    /// Event time over a runner's partitions: the watermark is the lowest of the partitions it
    /// reads (each a lane of its own), so a partition read ahead in event time makes nothing of
    /// another late. Partition 0 (key a) holds the second hour, partition 1 (key b) the first; the
    /// two are fetched side by side, and with one watermark over both, b's minutes were late and
    /// dropped as soon as a batch of a had gone by.
    func testEventTimeKeepsAWatermarkPerPartitionSoNoneMakesAnotherLate() throws {
        let events = (0..<1500).flatMap { second in
            ["{\"key\":\"a\",\"t\":\(3_600_000 + second * 1000)}", "{\"key\":\"b\",\"t\":\(second * 1000)}"]
        }
        try publishEvents(events, partitions: 2)
        let runner = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: EVENTS, subject: events, group: minutes, partitions: 2, leaseTimeout: 3s } }
            ops:
              - eventTime: { time: .t, maxDelay: 10s, idle: 2s }
              - aggregate: { by: .key, every: 1m, fields: { n: count } }
            sink: { file: \(path("minutes.jsonl")) }
            """)
        // b's minutes are emitted as the watermark passes them; a's wait for b until b, read to
        // its end, is idle (2 s); the last of each at the end of the run, once every event was
        // delivered (nothing pending in either partition).
        let deadline = Date(timeIntervalSinceNow: 30)
        while lines("minutes.jsonl").count < 48, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        while Date() < deadline {
            let shown = try runRivulet(["partitions", "--nats", natsURL, "--group", "minutes"])
            let pending = shown.stdout.split(separator: "\n").filter { $0.first?.isNumber == true }
                .map { $0.split(separator: " ")[2] }
            if pending == ["0", "0"] { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        let (status, stderr) = stop(runner)
        XCTAssertEqual(status, 143, stderr)
        XCTAssertFalse(stderr.contains("late"), stderr)
        var counts: [String: Int] = [:]
        for line in lines("minutes.jsonl") {
            let value = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            counts[value["key"] as? String ?? "?", default: 0] += value["n"] as? Int ?? 0
        }
        XCTAssertEqual(
            counts, ["a": 1500, "b": 1500], "every event counted once: \(lines("minutes.jsonl").count) minutes")
        XCTAssertEqual(lines("minutes.jsonl").count, 50, "25 minutes of each key")
    }

    /// Each result of a message is published with an id derived from the consumer and the
    /// message's stream sequence, so results of messages delivered again (as after a runner died
    /// before acknowledging them: here the group's consumers are deleted and every message is
    /// delivered again) are stored once.
    func testResultsOfMessagesDeliveredAgainAreStoredOnce() throws {
        try publishPartitioned(1...300)
        let pipeline = """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: orders, group: totals, partitions: 8, leaseTimeout: 2s } }
            ops:
              - map: { id: .id, customer: .customer }
              - flatMap: { events: { timeline: "{{ [{ at: '0ms', next: . }, { at: '0ms', next: { id: .id, copy: true } }, { at: '0ms', complete: true }] }}" } }
            sink: { nats: { url: "\(natsURL)", subject: out, stream: OUT, create: true } }
            """
        /// Runs a runner until every message was delivered and acknowledged.
        func runUntilSettled() throws {
            let runner = try startConsumer(pipeline)
            let deadline = Date(timeIntervalSinceNow: 30)
            while Date() < deadline {
                Thread.sleep(forTimeInterval: 0.3)
                let shown = try runRivulet(["partitions", "--nats", natsURL, "--group", "totals"])
                let rows = shown.stdout.split(separator: "\n").filter { $0.first?.isNumber == true }
                let settled =
                    rows.count == 8
                    && rows.allSatisfy { row in
                        let columns = row.split(separator: " ")
                        return columns.count == 7 && columns[2] == "0" && columns[3] == "0" && columns[4] != "0"
                    }
                if settled { break }
            }
            let (status, stderr) = stop(runner)
            XCTAssertEqual(status, 143, stderr)
        }
        try runUntilSettled()
        XCTAssertEqual(try storedMessages("OUT"), 600, "two results a message")
        try withJetStream { js in
            for partition in 0..<8 {
                var code = jsErrCode(rawValue: 0)
                XCTAssertEqual(js_DeleteConsumer(js, "ORDERS", "totals-p\(partition)", nil, &code), NATS_OK)
            }
        }
        try runUntilSettled()
        XCTAssertEqual(
            try storedMessages("OUT"), 600, "the results of messages delivered again were dropped as repeats")
    }

    /// Runners joining and leaving one by one, watched through the lease bucket's own stream: a
    /// partition passes from one runner to the next only through a release (the empty value its
    /// holder writes when it lets go), never from a live holder to another, and nothing is lost.
    /// How long each partition was without a holder is printed.
    func testRunnersJoiningAndLeavingOneByOneNeverShareAPartition() throws {
        try publishPartitioned(1...1)
        let first = try runner("r1.jsonl", leaseTimeout: "2s")
        waitForStderr(first, containing: "holding partitions")
        // Every write of a lease, in the order the server took them (each read well before the
        // bucket keeps only the newest of a key).
        let history = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: KV_rivulet-leases-totals, subject: "$KV.rivulet-leases-totals.partitions.>", durable: history, format: text, metadata: meta } }
            ops:
              - map: { partition: .meta.subject, holder: .value, at: now() }
            sink: { file: \(path("history.jsonl")) }
            """)
        let outputs = ["r1.jsonl", "r2.jsonl", "r3.jsonl", "r4.jsonl"]
        func waitForAll(_ count: Int) {
            let deadline = Date(timeIntervalSinceNow: 30)
            while Set(outputs.flatMap(ids)).count < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        }
        let round = 3.0  // four and a half rounds: a change settles within two
        let second = try runner("r2.jsonl", leaseTimeout: "2s")
        Thread.sleep(forTimeInterval: round)
        try publishPartitioned(2...300)
        let third = try runner("r3.jsonl", leaseTimeout: "2s")
        Thread.sleep(forTimeInterval: round)
        XCTAssertEqual(stop(first).0, 143)
        Thread.sleep(forTimeInterval: round)
        try publishPartitioned(301...600)
        XCTAssertEqual(stop(second).0, 143)
        Thread.sleep(forTimeInterval: round)
        let fourth = try runner("r4.jsonl", leaseTimeout: "2s")
        Thread.sleep(forTimeInterval: round)
        try publishPartitioned(601...900)
        waitForAll(900)
        XCTAssertEqual(Set(outputs.flatMap(ids)), Set(1...900), "nothing lost")
        XCTAssertEqual(stop(third).0, 143)
        XCTAssertEqual(stop(fourth).0, 143)
        _ = stop(history)

        struct Write: Decodable {
            let partition: String
            let holder: String
            let at: Int
        }
        let writes = try lines("history.jsonl").filter { !$0.allSatisfy(\.isWhitespace) }.map {
            try JSONDecoder().decode(Write.self, from: Data($0.utf8))
        }
        var holders: [String: (holder: String, at: Int)] = [:]
        var withoutHolder: [Int] = []
        for write in writes {
            defer { holders[write.partition] = (write.holder, write.at) }
            guard let last = holders[write.partition], last.holder != write.holder, !write.holder.isEmpty else {
                continue
            }
            XCTAssertTrue(
                last.holder.isEmpty,
                "\(write.partition) passed from \(last.holder) to \(write.holder) without a release")
            withoutHolder.append(write.at - last.at)
        }
        print(
            "rebalance: \(withoutHolder.count) hand-overs, without a holder "
                + "max \(withoutHolder.max() ?? 0) ms, mean \(withoutHolder.reduce(0, +) / max(1, withoutHolder.count)) ms"
        )
        XCTAssertGreaterThanOrEqual(
            withoutHolder.count, 12, "joins and leaves moved partitions: \(writes.count) writes")
        XCTAssertLessThan(withoutHolder.max() ?? 0, 2000, "taken at the next round (0.67 s), not after the lease")
    }

    /// A runner holding 16 partitions stops on SIGTERM as promptly as any run: its readers stop
    /// fetching all at once (they were stopped one after the other, each waiting out its fetch's
    /// 500 ms: 7 s).
    func testARunnerHoldingManyPartitionsStopsPromptly() throws {
        let process = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: orders, group: many, partitions: 16, create: true } }
            sink: stdout
            """)
        waitForStderr(process, containing: "holding partitions")
        Thread.sleep(forTimeInterval: 0.5)  // every reader in its fetch
        let sent = Date()
        let (status, stderr) = stop(process)
        XCTAssertEqual(status, 143, stderr)
        XCTAssertLessThan(
            Date().timeIntervalSince(sent), 1.5, "stopped \(Date().timeIntervalSince(sent)) s after SIGTERM")
    }

    /// The YAML lines docs/running-several-runners.md shows lint clean, each in a minimal pipeline.
    func testTheDocsSnippetsAreValid() throws {
        let docs = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/running-several-runners.md"),
            encoding: .utf8)
        let snippets = docs.components(separatedBy: "```yaml\n").dropFirst().map {
            String($0.prefix(while: { $0 != "`" })).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertGreaterThanOrEqual(snippets.count, 2)
        for snippet in snippets {
            let pipeline =
                snippet.hasPrefix("sink:") ? "source: { events: [] }\n\(snippet)\n" : "\(snippet)\nsink: stdout\n"
            let file = path("snippet-\(UUID().uuidString).yaml")
            try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
            let lint = try runRivulet(["lint", file])
            XCTAssertEqual(lint.status, 0, "\(snippet)\n\(lint.stdout)\(lint.stderr)")
        }
    }

    /// A runner whose file reads other partitions than the group's running runners is refused: two
    /// divisions of one group would each read part of the other's partitions.
    func testARunnerThatDisagreesWithItsGroupIsRefused() throws {
        try publishPartitioned(1...1)
        let first = try runner("a.jsonl")
        defer { _ = stop(first) }
        waitForStderr(first, containing: "holding partitions")
        let other = try run(
            """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: orders, group: totals, partitions: 16 } }
            sink: stdout
            """)
        XCTAssertEqual(other.status, 1, other.stderr)
        assertContains(
            other.stderr,
            "group 'totals' reads 8 partitions of orders in ORDERS (as its runners say); this file says 16 of orders in ORDERS"
        )
    }

    func testAnOperatorThatNeedsTheWholeStreamRunsOnEachOfTheGroupsPartitions() throws {
        // Lint said ok; the run refused it ("partitions must be 8 (the source's), not 1"): a
        // partitionBy with such an operator ran as one partition, which no runner of a group can.
        try publishPartitioned(1...40)
        let counter = try startConsumer(
            """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: orders, group: totals, partitions: 8 } }
            ops:
              - partitionBy: { key: .customer, partitions: 8, ops: [{ scan: { seed: 0, accumulator: acc + 1 } }] }
            sink: { file: \(path("counts.jsonl")) }
            """)
        waitForLines("counts.jsonl", atLeast: 40)
        let (status, errors) = stop(counter)
        XCTAssertEqual(status, 143, errors)
        // Each partition counts its own messages from 1: as many 1s as partitions that had any,
        // and never more of a count than of the one before it.
        let counts = ((try? String(contentsOfFile: path("counts.jsonl"), encoding: .utf8)) ?? "")
            .split(separator: "\n").compactMap { Int($0) }
        XCTAssertEqual(counts.count, 40, errors)
        let times = Dictionary(grouping: counts, by: { $0 }).mapValues(\.count)
        XCTAssertTrue((1...8).contains(times[1] ?? 0), "\(counts)")
        XCTAssertTrue(times.keys.allSatisfy { (times[$0] ?? 0) <= (times[$0 - 1] ?? 8) }, "\(counts)")
        XCTAssertLessThan(counts.max() ?? 0, 40, "not one count over the whole stream")
    }

    func testPartitionsFlagsAKilledHoldersLeaseAndShowsTheStoredFloorAfterATakeover() throws {
        try publishPartitioned(1...400)
        let pipeline = """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: orders, group: totals, partitions: 8, leaseTimeout: 6s } }
            ops:
              - map: { id: .id }
            sink: { file: \(path("state.jsonl")) }
            """
        let file = path("state.yaml")
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        func startRunner(_ name: String) throws -> ChildProcess {
            try startRivulet(
                ["run", file, "--state", path("\(name).db"), "--checkpoint-interval", "200ms"], output: .null,
                error: .pipe)
        }
        let first = try startRunner("a")
        var floors: [Int: UInt64] = [:]
        var killed = ""
        var settled: Date?
        // A checkpoint stores the floor the server had confirmed when it was taken; an idle runner
        // asks for it once a second. So the stored floors are the acknowledged ones once every
        // partition was stored again more than a second after everything was acknowledged.
        try waitForGroup("every message acknowledged by the first runner, and its floor stored") { status in
            killed = status.runners.first ?? ""
            guard status.partitions.allSatisfy({ $0.pending == 0 && $0.unacknowledged == 0 }) else {
                settled = nil
                return false
            }
            let since = settled ?? Date()
            settled = since
            floors = Dictionary(
                uniqueKeysWithValues: status.partitions.map { ($0.number, $0.acknowledgedThrough ?? 0) })
            let storedAfter = Int64((since.timeIntervalSince1970 + 1.5) * 1e9)
            return floors.values.allSatisfy { $0 > 0 }
                && status.partitions.allSatisfy { ($0.checkpointedAt ?? 0) > storedAfter }
        }
        first.send(SIGKILL)
        _ = first.wait()
        // Renewed every 2 s: 3 s without a renewal is flagged, until the lease expires at 6 s.
        var flagged = ""
        let deadline = Date(timeIntervalSinceNow: 8)
        while flagged.isEmpty, Date() < deadline {
            let shown = try runRivulet(["partitions", "--nats", natsURL, "--group", "totals"])
            if shown.stdout.contains("(not renewed for ") { flagged = shown.stdout }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertTrue(flagged.contains(", expires in "), flagged)
        // A runner takes the partitions over, each through a consumer of its own that has
        // acknowledged nothing yet: the floor shown is the stored one, not 0.
        let second = try startRunner("b")
        var status: NATSGroupStatus?
        try waitForGroup("the second runner holding every partition") { read in
            status = read
            return read.runners.count == 1 && read.runners.first != killed
                && read.partitions.allSatisfy { $0.runner == read.runners.first }
        }
        // The read that saw the takeover is the one checked (a later one could hide a floor
        // shown as 0 for a moment).
        guard let status else { return }
        for partition in status.partitions {
            XCTAssertGreaterThanOrEqual(
                partition.acknowledgedThrough ?? 0, floors[partition.number] ?? 0, "\(status.text())")
        }
        XCTAssertFalse(status.text().contains("not renewed"), status.text())
        let (stopped, errors) = stop(second)
        XCTAssertEqual(stopped, 143, errors)
    }

    /// Publishes 30 minutes of events of 40 keys, one every 10 s a key (7,200), over 8 partitions
    /// of `events`, from 9 s into a minute: 30 one-minute windows a key, 1,200 in all, the last
    /// ending 1 s after the last event.
    private func publishMinutes() throws {
        let events = stride(from: 0, to: 1800, by: 10).flatMap { second in
            (0..<40).map { "{\"key\":\"k\($0)\",\"t\":\(1_700_000_049_000 + second * 1000 + $0)}" }
        }
        try publishEvents(events, partitions: 8)
    }

    /// Publishes `events` (JSON lines with `key` and `t`) to `events.P` of the stream EVENTS, by
    /// their key over `partitions` partitions.
    private func publishEvents(_ events: [String], partitions: Int) throws {
        let file = path("events-\(partitions).jsonl")
        try (events.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let published = try run(
            """
            source: { fixture: \(file) }
            sink: { nats: { url: "\(natsURL)", subject: events, partitionBy: .key, partitions: \(partitions), msgId: "{{ .key }}{{ .t }}", stream: EVENTS, create: true } }
            """)
        XCTAssertEqual(published.status, 0, published.stderr)
    }

    /// The per-minute counts of a `partitionBy` of the group's partitions, summed per key.
    private func countedPerKey(_ output: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in lines(output) {
            let value = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            counts[value["key"] as? String ?? "?", default: 0] += value["n"] as? Int ?? 0
        }
        return counts
    }

    private func minutesRunner(_ output: String, idle: String = "") throws -> String {
        let file = path("minutes-\(output).yaml")
        try """
        source: { nats: { url: "\(natsURL)", stream: EVENTS, subject: events, group: minutes, partitions: 8, leaseTimeout: 3s } }
        ops:
          - partitionBy:
              key: .key
              partitions: 8
              ops:
                - eventTime: { time: .t, maxDelay: 10s\(idle) }
                - aggregate: { by: .key, every: 1m, fields: { n: count } }
        sink: { file: \(path(output)) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Without --state, a `partitionBy` of the group's partitions runs each partition's chain on
    /// its partition's messages with a watermark of its own: windows come out as the watermarks
    /// pass them, and SIGTERM emits the open ones. (Each chain's eventTime waited on every lane of
    /// the source, most of which never fed it: nothing came out while it ran, the consumers
    /// stalled at maxAckPending, and a stop wrote part of the windows.)
    func testAGroupsPartitionByWithoutStateEmitsWindowsAsTheyCloseAndTheRestOnSIGTERM() throws {
        try publishMinutes()
        let port = freeLoopbackPort()
        let runner = try startRivulet(
            ["run", try minutesRunner("closed.jsonl"), "--metrics", "127.0.0.1:\(port)"], output: .null, error: .pipe)
        let deadline = Date(timeIntervalSinceNow: 30)
        while lines("closed.jsonl").count < 1160, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertEqual(lines("closed.jsonl").count, 1160, "the 29 windows a key the watermarks passed, while it runs")
        try waitForGroup("every message read", group: "minutes") { status in
            status.partitions.allSatisfy { $0.pending == 0 }
        }
        // Each partition's own watermark, on partitionBy's row: its latest time (keys' last times
        // are 1,790 s in plus 0 to 39 ms) less maxDelay (10 s); read every second.
        let last = Double(1_700_000_049_000 + 1_790_000 - 10_000)
        var watermarks: [Double?] = []
        let shown = Date(timeIntervalSinceNow: 5)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            let metrics = LoopbackHTTP.get(port, "/metrics")?.body ?? ""
            watermarks = (0..<8).map { partition in
                LoopbackHTTP.sample(
                    metrics, "rivulet_partition_watermark_ms",
                    [#"component="partitionBy""#, #"partition="\#(partition)""#])
            }
        } while !watermarks.allSatisfy({ ($0 ?? 0) >= last }) && Date() < shown
        XCTAssertTrue(watermarks.allSatisfy { ($0 ?? 0) >= last && ($0 ?? 0) < last + 40 }, "\(watermarks)")
        // top: the partitions' watermarks as times under plain titles, and a note on the one
        // holding the stream's back (every message read: it is quiet).
        let view = try runRivulet(["top", "127.0.0.1:\(port)", "ops.0"])
        XCTAssertEqual(view.status, 0, view.stderr)
        let rows = view.stdout.split(separator: "\n").map(String.init)
        let title = try XCTUnwrap(rows.firstIndex(of: "ops.0 partitionBy by partition"), view.stdout)
        assertContains(rows[title + 1], "PARTITION", "WATERMARK", "BEHIND", "IDLE", "NOTE")
        let partitionRows = rows[(title + 2)...].prefix(8)
        XCTAssertTrue(partitionRows.allSatisfy { $0.contains("2023-11-14T22:") }, view.stdout)
        let holding = partitionRows.filter { $0.contains("holds the watermark back") }
        XCTAssertEqual(holding.count, 1, view.stdout)
        assertContains(holding.first ?? "", "(quiet: nothing read for a second)")
        // `rivulet partitions` shows each partition's watermark, told by its holder with its lease.
        try waitForGroup("every partition's watermark told", group: "minutes") { status in
            status.partitions.allSatisfy { Double($0.watermark ?? 0) >= last }
        }
        let told = try runRivulet(["partitions", "--nats", natsURL, "--group", "minutes"])
        assertContains(told.stdout, "watermark")
        let toldRows = told.stdout.split(separator: "\n").filter { $0.first?.isNumber == true }
        XCTAssertEqual(toldRows.count, 8, told.stdout)
        XCTAssertTrue(toldRows.allSatisfy { $0.split(separator: " ")[5].hasPrefix("2023-11-14T22:43:") }, told.stdout)
        let (status, stderr) = stop(runner)
        XCTAssertEqual(status, 143, stderr)
        XCTAssertEqual(lines("closed.jsonl").count, 1200, "and each key's last on SIGTERM")
        XCTAssertEqual(
            try countedPerKey("closed.jsonl"), Dictionary(uniqueKeysWithValues: (0..<40).map { ("k\($0)", 180) }))
    }

    /// A runner that takes a group's partitions over (the last holder SIGKILLed) and gets no new
    /// message for them still releases their last windows once `idle` has passed: the watermark
    /// of a chain restored from its stored state goes on from its stored clock.
    func testIdleReleasesTheLastWindowsOfPartitionsTakenOverWithNothingNew() throws {
        try publishMinutes()
        func startRunner(_ name: String) throws -> ChildProcess {
            try startRivulet(
                [
                    "run", try minutesRunner("taken-\(name).jsonl", idle: ", idle: 8s"), "--state", path("\(name).db"),
                    "--checkpoint-interval", "200ms",
                ], output: .null, error: .pipe)
        }
        let first = try startRunner("a")
        try waitForGroup("every message read and held in a stored checkpoint", group: "minutes") { status in
            status.partitions.allSatisfy { $0.pending == 0 && $0.unacknowledged == 0 && $0.checkpointedAt != nil }
        }
        first.send(SIGKILL)
        _ = first.wait()
        XCTAssertEqual(lines("taken-a.jsonl").count, 1160, "the last window of each key waits for idle")
        let second = try startRunner("b")
        // The lease (3 s), idle (8 s), then the watermark goes on with the wall clock from the
        // stored one (the last event's time less maxDelay, 10 s) to the window's end, 6 s on. (The
        // sink holds lines short of a page until the run ends: they are counted after the stop.)
        Thread.sleep(forTimeInterval: 28)
        let (status, stderr) = stop(second)
        XCTAssertEqual(status, 143, stderr)
        XCTAssertEqual(lines("taken-b.jsonl").count, 40, "each key's last window, released by idle: \(stderr)")
        var counts = try countedPerKey("taken-a.jsonl")
        counts.merge(try countedPerKey("taken-b.jsonl"), uniquingKeysWith: +)
        XCTAssertEqual(counts, Dictionary(uniqueKeysWithValues: (0..<40).map { ("k\($0)", 180) }))
    }

    func testPartitionsOfAGroupNoRunnerStartedIsAClearError() throws {
        let shown = try runRivulet(["partitions", "--nats", natsURL, "--group", "nobody"])
        XCTAssertEqual(shown.status, 1)
        assertContains(shown.stderr, "no group 'nobody' on \(natsURL): no runner of it has started")
    }

    func testLintChecksTheGroupsParameters() throws {
        for (extra, message) in [
            ("group: g", "group and partitions go together"),
            ("partitions: 4", "group and partitions go together"),
            ("group: g, partitions: 4, leaseTimeout: 500ms", "leaseTimeout"),
            ("group: g, partitions: 4, durable: d", "durable and group exclude each other"),
            ("group: \"a.b\", partitions: 4", "may hold only letters, digits, - and _"),
            // Once passed by lint, then refused by the server at start.
            (
                "group: \(String(repeating: "g", count: 300)), partitions: 4",
                "group is 300 characters long, more than the 200"
            ),
            ("group: g, partitions: 2000", "partitions is 2000, more than the 256 a group may have"),
        ] {
            let result = try run(
                "source: { nats: { url: \"\(natsURL)\", stream: ORDERS, subject: orders, \(extra) } }\nsink: stdout\n")
            XCTAssertEqual(result.status, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains(message), "\(extra): \(result.stderr)")
        }
    }
}
