import BinaryTestSupport
import Components
import Foundation
import XCTest

/// Several runners sharing one durable consumer, against one server and against a three-node
/// JetStream cluster: a runner or a server node killed with SIGKILL mid-run loses nothing.
final class NATSScaleOutTests: NATSServerOrClusterTestCase {
    /// A runner of the shared consumer: each id it writes goes to `output`; `delay` keeps
    /// elements in flight, so a kill finds some written and not yet acknowledged.
    private func runner(_ output: String, replicas: String = "") -> String {
        consumerPipeline(
            durable: "shared", output: output, extra: ", ackWait: 1s, batch: 50\(replicas)",
            ops: "- map: { id: .id }\n  - delay: 1ms")
    }

    /// Three runners over `total` messages; `midRun` is called (and a runner killed with SIGKILL)
    /// while they are busy; then every id must be in their files. Returns the duplicates.
    private func shareAmongThreeRunners(
        total: Int, replicas: String = "", file: StaticString = #filePath, line: UInt = #line,
        midRun: () -> Void = {}
    ) throws -> Int {
        try writeOrders(1...total)
        // The stream and the consumer exist before anything is published.
        let setup = try startConsumer(runner("setup.jsonl", replicas: replicas))
        waitForStderr(setup, containing: "nats: reading ORDERS/shared")
        XCTAssertEqual(stop(setup).0, 143, file: file, line: line)
        // A cluster's stream, just made, may still be electing its leader: a full run on a slow
        // machine once saw "no responders" outlast the sink's six tries.
        let published = try publish(stream: "ORDERS")
        XCTAssertEqual(published.status, 0, published.stderr, file: file, line: line)

        let outputs = ["one.jsonl", "two.jsonl", "three.jsonl"]
        var runners = try outputs.map { try startConsumer(runner($0, replicas: replicas)) }
        waitForLines("two.jsonl", atLeast: total / 20)
        midRun()
        runners[1].send(SIGKILL)
        XCTAssertEqual(runners[1].wait(), .signalled(SIGKILL), file: file, line: line)
        let atKill = Set(outputs.flatMap(ids))
        XCTAssertLessThan(atKill.count, total, "killed while busy", file: file, line: line)

        let deadline = Date(timeIntervalSinceNow: 120)
        while Set(outputs.flatMap(ids)).count < total && Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        for index in [0, 2] {
            let (status, stderr) = stop(runners[index])
            XCTAssertEqual(status, 143, stderr, file: file, line: line)
        }
        runners.removeAll()
        let all = outputs.flatMap(ids)
        XCTAssertEqual(Set(all), Set(1...total), "every message written at least once", file: file, line: line)
        for output in outputs {
            XCTAssertFalse(lines(output).isEmpty, "\(output) had a share", file: file, line: line)
        }
        return all.count - Set(all).count
    }

    func testThreeRunnersShareFiftyThousandMessagesAndAKilledOneLosesNothing() throws {
        server = try NATSServer(storeDirectory: path("js"))
        let duplicates = try shareAmongThreeRunners(total: 50000)
        print("nats: three runners, one killed: \(duplicates) duplicates of 50000")
    }

    func testAThreeNodeClusterCarriesOnWhenTheConsumerLeaderNodeIsKilled() throws {
        let started = try NATSCluster(directory: directory)
        cluster = started
        let duplicates = try shareAmongThreeRunners(total: 50000, replicas: ", replicas: 3") {
            let leader = started.consumerLeader(stream: "ORDERS", consumer: "shared") ?? 0
            started.kill(node: leader)
            print("nats: killed cluster node n\(leader), the consumer's leader")
        }
        print("nats: three-node cluster, a node and a runner killed: \(duplicates) duplicates of 50000")
    }

    /// A runner that starts before its cluster has formed (one node of three up: JetStream has
    /// no leader) waits for JetStream instead of failing at once, says so, and reads once the
    /// other nodes are up. (Without it, a runner that met a leaderless cluster exited 1.)
    func testARunnerStartingBeforeItsClusterHasALeaderWaitsForIt() throws {
        let started = try NATSCluster(directory: directory, starting: [0])
        cluster = started
        let waiting = try startConsumer(
            runner("late.jsonl", replicas: ", replicas: 3").replacingOccurrences(
                of: natsURL, with: "nats://127.0.0.1:\(started.clientPorts[0])"))
        waitForStderr(waiting, containing: "trying again for up to lostAfter (60s)")
        XCTAssertNil(waiting.exited(), "still waiting for JetStream")
        try started.start(node: 1)
        try started.start(node: 2)
        // The stream and its consumer are made once the cluster has a leader: then publish.
        waitForStderr(waiting, containing: "JetStream answers again", seconds: 60)
        try writeOrders(1...200)
        let published = try publish()
        XCTAssertEqual(published.status, 0, published.stderr)
        waitForLines("late.jsonl", atLeast: 200)
        XCTAssertEqual(Set(ids("late.jsonl")), Set(1...200))
        let (status, stderr) = stop(waiting)
        XCTAssertEqual(status, 143, stderr)
    }

    /// A runner stopped while its link to the server is slow (what it sends arrives 0.3 s late)
    /// gives back what its last pull request delivers after its fetch returned: the server ends
    /// the request up to its expiry after *receiving* it, so late. The next runner of the
    /// consumer reads those orders at once, not after ackWait (30 s). (Without waiting for the
    /// request to lapse, what it delivered to the closing runner was stranded until ackWait.)
    func testARunnerStoppedOverASlowLinkLeavesNothingForAckWait() throws {
        let started = try NATSServer(storeDirectory: path("js"))
        server = started
        let proxy = try DelayingProxy(upstreamPort: Int(started.port) ?? 0, delay: 0.3)
        defer { proxy.stop() }
        // One message a pull request: a request still waiting on the server takes one.
        let shared = consumerPipeline(
            durable: "shared", output: "OUTPUT", extra: ", batch: 1", ops: "- map: { id: .id }")
        // The stream and the consumer exist before the slow runner and the publisher start.
        let setup = try startConsumer(shared.replacingOccurrences(of: path("OUTPUT"), with: path("setup.jsonl")))
        waitForStderr(setup, containing: "nats: reading ORDERS/shared")
        XCTAssertEqual(stop(setup).0, 143)
        let slow = try startConsumer(
            shared.replacingOccurrences(of: path("OUTPUT"), with: path("slow.jsonl"))
                .replacingOccurrences(of: natsURL, with: "nats://127.0.0.1:\(proxy.port)"))
        waitForStderr(slow, containing: "nats: reading ORDERS/shared")
        let feed = path("feed.jsonl")
        XCTAssertTrue(FileManager.default.createFile(atPath: feed, contents: nil))
        let publisher = try startConsumer(
            """
            source: { file: { path: \(feed), follow: true, poll: 10ms } }
            sink: { nats: { url: "\(natsURL)", subject: orders.new, msgId: "{{ .id }}", stream: ORDERS } }
            """)
        defer { _ = stop(publisher) }
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: feed))
        defer { try? handle.close() }
        // Order 0 read: the publisher runs. Then, idle, the slow runner's fetches end at their
        // deadline with their requests still waiting on the server. It is stopped, and orders
        // come every 20 ms over its last request's life.
        handle.write(Data("{\"id\":0}\n".utf8))
        waitForLines("slow.jsonl", atLeast: 1)
        Thread.sleep(forTimeInterval: 1.5)
        slow.send(SIGTERM)
        for id in 1...40 {
            handle.write(Data("{\"id\":\(id)}\n".utf8))
            Thread.sleep(forTimeInterval: 0.02)
        }
        let (slowStatus, slowStderr) = stop(slow)
        XCTAssertEqual(slowStatus, 143, slowStderr)
        let next = try startConsumer(shared.replacingOccurrences(of: path("OUTPUT"), with: path("next.jsonl")))
        let nextStarted = Date()
        let outputs = ["slow.jsonl", "next.jsonl"]
        let deadline = Date(timeIntervalSinceNow: 40)
        while Set(outputs.flatMap(ids)).count < 41, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(Set(outputs.flatMap(ids)), Set(0...40), "nothing lost")
        XCTAssertLessThan(
            Date().timeIntervalSince(nextStarted), 10, "every order read by the next runner at once, none after ackWait"
        )
        let (status, stderr) = stop(next)
        XCTAssertEqual(status, 143, stderr)
    }
}
