import BinaryTestSupport
import CNATS
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// A `nats-server` of the test's own on 127.0.0.1, stopped by `stop()` (and killed with the test
/// process at the latest).
final class NATSServer {
    let process: ChildProcess
    let url: String
    let port: String

    /// Starts `nats-server -js` at `port` (nil: a free one the server picks) with its store in
    /// `storeDirectory`.
    convenience init(storeDirectory: String, port: String? = nil) throws {
        try self.init(arguments: ["-js", "-a", "127.0.0.1", "-p", port ?? "-1", "-sd", storeDirectory])
    }

    /// Starts `nats-server` with `arguments` and waits until it is ready; its log goes to stderr,
    /// read here until then (a server that logs a lot afterwards should log to a file).
    init(arguments: [String]) throws {
        process = try ChildProcess(
            executable: "nats-server", arguments: arguments, input: .null, output: .null, error: .pipe)
        var log = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date(timeIntervalSinceNow: 10)
        while !log.contains("Server is ready"), Date() < deadline {
            let count = read(process.standardError, &buffer, buffer.count)
            guard count > 0 else { break }
            log += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        guard let range = log.range(of: #"client connections on 127\.0\.0\.1:(\d+)"#, options: .regularExpression),
            let port = log[range].split(separator: ":").last
        else {
            process.send(SIGKILL)
            throw NSError(domain: "nats-server did not start: \(log)", code: 1)
        }
        self.port = String(port)
        url = "nats://127.0.0.1:\(port)"
    }

    func stop(_ signal: Int32 = SIGTERM) {
        process.send(signal)
        _ = process.wait()
    }
}

/// Three `nats-server -js` nodes on loopback routed into one JetStream cluster; each logs to a
/// file in `directory` (a cluster logs too much for an unread pipe).
final class NATSCluster {
    private(set) var nodes: [ChildProcess?]
    private(set) var clientPorts: [Int]
    private var routePorts: [Int] = []
    /// Whether `init` is done: a node started after it takes ports picked as it starts.
    private var initialized = false
    private let directory: URL
    /// Every node's URL, comma-separated, as a runner names a cluster.
    var url: String { clientPorts.map { "nats://127.0.0.1:\($0)" }.joined(separator: ",") }

    /// Starts the nodes `starting` (all three by default) and, when all three are started, waits
    /// until the cluster is ready; `start(node:)` starts the others later. A cluster that does not
    /// form is started again on other ports (a port picked free can be taken by another client's
    /// connection before its node listens on it), three tries in all.
    init(directory: URL, starting: [Int] = [0, 1, 2]) throws {
        self.directory = directory
        nodes = [nil, nil, nil]
        clientPorts = []
        for attempt in 1...3 {
            do {
                try configure()
                for node in starting { try start(node: node) }
                initialized = true
                return
            } catch {
                if attempt == 3 { throw error }
                print("nats: the cluster did not form (try \(attempt)), starting it again on other ports")
                stop()
                try? FileManager.default.removeItem(at: directory.appendingPathComponent("cluster"))
            }
        }
    }

    /// Picks free ports and writes each node's configuration, its store and log under `cluster/`.
    private func configure() throws {
        let home = directory.appendingPathComponent("cluster")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        clientPorts = (0..<3).map { _ in freeLoopbackPort() }
        routePorts = (0..<3).map { _ in freeLoopbackPort() }
        for node in 0..<3 { try writeConfiguration(node: node) }
    }

    private func writeConfiguration(node: Int) throws {
        let home = directory.appendingPathComponent("cluster")
        let routes = routePorts.map { "nats-route://127.0.0.1:\($0)" }.joined(separator: ", ")
        try """
        server_name: n\(node)
        listen: 127.0.0.1:\(clientPorts[node])
        log_file: "\(logPath(node: node))"
        jetstream { store_dir: "\(home.appendingPathComponent("node\(node)").path)" }
        cluster { name: rivulet, listen: 127.0.0.1:\(routePorts[node]), routes: [\(routes)] }
        """.write(to: home.appendingPathComponent("node\(node).conf"), atomically: true, encoding: .utf8)
    }

    /// Starts `node` after `init` on ports picked now: picked seconds before, they can be taken by
    /// another client's connection meanwhile (the others' routes reach it as it dials them). A
    /// node that finds its port taken anyway is started again on other ports, three tries in all.
    private func startLate(node: Int) throws {
        for attempt in 1...3 {
            clientPorts[node] = freeLoopbackPort()
            routePorts[node] = freeLoopbackPort()
            try writeConfiguration(node: node)
            try? FileManager.default.removeItem(atPath: logPath(node: node))
            let config = directory.appendingPathComponent("cluster/node\(node).conf")
            nodes[node] = try ChildProcess(
                executable: "nats-server", arguments: ["-c", config.path], input: .null, output: .null, error: .null)
            let deadline = Date(timeIntervalSinceNow: 5)
            while Date() < deadline, !log(node: node).contains("Server is ready"),
                !log(node: node).contains("address already in use")
            {
                Thread.sleep(forTimeInterval: 0.05)
            }
            guard log(node: node).contains("address already in use"), attempt < 3 else { return }
            print("nats: node \(node) found its port taken (try \(attempt)), starting it again on other ports")
            nodes[node]?.send(SIGTERM)
            _ = nodes[node]?.wait()
            nodes[node] = nil
        }
    }

    /// Starts `node`; once all three run, waits until every node knows JetStream's metadata
    /// leader (before, creating a stream fails): each answers JetStream's account request. (Its
    /// log does not say so: a node that joins once the leader is elected may log nothing of it.)
    func start(node: Int) throws {
        if initialized {
            try startLate(node: node)
        } else {
            let config = directory.appendingPathComponent("cluster/node\(node).conf")
            nodes[node] = try ChildProcess(
                executable: "nats-server", arguments: ["-c", config.path], input: .null, output: .null, error: .null)
        }
        guard nodes.allSatisfy({ $0 != nil }) else { return }
        let deadline = Date(timeIntervalSinceNow: 30)
        func ready(_ node: Int) -> Bool {
            log(node: node).contains("Server is ready") && answersJetStream(node)
        }
        while !(0..<3).allSatisfy(ready), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        guard (0..<3).allSatisfy(ready) else {
            let tails = (0..<3).map { node in
                "n\(node): " + log(node: node).split(separator: "\n").suffix(3).joined(separator: " | ")
            }
            stop()
            throw NSError(
                domain: "the nats-server cluster did not start; " + tails.joined(separator: "; "), code: 1)
        }
    }

    /// Whether `node` answers JetStream's account request without an error: it knows the
    /// metadata leader.
    private func answersJetStream(_ node: Int) -> Bool {
        var connection: OpaquePointer?
        guard natsConnection_ConnectTo(&connection, "nats://127.0.0.1:\(clientPorts[node])") == NATS_OK,
            let connection
        else { return false }
        defer { natsConnection_Destroy(connection) }
        var reply: OpaquePointer?
        guard natsConnection_RequestString(&reply, connection, "$JS.API.INFO", "", 1000) == NATS_OK, let reply
        else { return false }
        defer { natsMsg_Destroy(reply) }
        let answer = String(
            decoding: UnsafeRawBufferPointer(
                start: natsMsg_GetData(reply), count: Int(natsMsg_GetDataLength(reply))), as: UTF8.self)
        return !answer.contains("\"error\"")
    }

    private func logPath(node: Int) -> String {
        directory.appendingPathComponent("cluster/node\(node).log").path
    }

    private func log(node: Int) -> String {
        (try? String(contentsOfFile: logPath(node: node), encoding: .utf8)) ?? ""
    }

    /// The node that leads `consumer` now: the last to log that it became its leader.
    func consumerLeader(stream: String, consumer: String) -> Int? {
        latestToLog("new consumer leader for '$G > \(stream) > \(consumer)'")
    }

    /// The node that leads the consumer of `stream` made last whose name starts with `prefix`
    /// (a group's partition under --state has one a takeover: `GROUP-pP-TOKEN`).
    func consumerLeader(stream: String, namedLike prefix: String) -> Int? {
        latestToLog("new consumer leader for '$G > \(stream) > \(prefix)")
    }

    /// The node that leads `stream` now (a key-value bucket's is `KV_BUCKET`).
    func streamLeader(_ stream: String) -> Int? {
        latestToLog("new stream leader for '$G > \(stream)'")
    }

    /// The node that logged `line` last.
    private func latestToLog(_ line: String) -> Int? {
        let latest = (0..<3).compactMap { node -> (time: String, node: Int)? in
            guard let entry = log(node: node).split(separator: "\n").last(where: { $0.contains(line) }) else {
                return nil
            }
            // "[pid] 2026/11/24 01:48:21.227984 [INF] …": the date and time sort as text.
            return (entry.split(separator: " ").dropFirst().prefix(2).joined(separator: " "), node)
        }
        return latest.max { $0.time < $1.time }?.node
    }

    /// Kills one node with SIGKILL, as a machine that dies.
    func kill(node: Int) {
        nodes[node]?.send(SIGKILL)
        _ = nodes[node]?.wait()
        nodes[node] = nil
    }

    func stop() {
        for node in nodes.indices { nodes[node]?.send(SIGTERM) }
        for node in nodes.indices {
            _ = nodes[node]?.wait()
            nodes[node] = nil
        }
    }
}

/// What the NATS binary tests share: a scratch directory, orders to publish, runners to start
/// and stop, and their output files to read.
class NATSTestCase: BinaryTestCase {
    /// The server (or servers, comma-separated) the pipelines name.
    var natsURL: String { "" }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func writeOrders(_ ids: ClosedRange<Int>) throws {
        let lines = ids.map { "{\"id\":\($0),\"qty\":\($0 % 7),\"price\":2.5}" }.joined(separator: "\n")
        try (lines + "\n").write(toFile: path("orders.jsonl"), atomically: true, encoding: .utf8)
    }

    /// Publishes orders.jsonl to the ORDERS stream (created by a consumer first) with msgId.
    /// Publishes orders.jsonl to `orders.new`. With `stream`, the sink checks that stream first and
    /// then waits out "no responders" (a stream electing its leader, as a cluster's just made may
    /// be) instead of failing after its six tries.
    func publish(stream: String? = nil) throws -> ProcessResult {
        try run(
            """
            source: { fixture: \(path("orders.jsonl")) }
            sink: { nats: { url: "\(natsURL)", subject: orders.new, msgId: "{{ .id }}"\(stream.map { ", stream: \($0)" } ?? "") } }
            """)
    }

    func consumerPipeline(durable: String, output: String, extra: String = "", ops: String? = nil) -> String {
        """
        source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: \(durable), create: true\(extra) } }
        ops:
          \(ops ?? "- filter: .qty > 0\n  - map: { id: .id, total: .qty * .price }")
        sink: { file: \(path(output)) }
        """
    }

    /// Starts a runner; it runs until signalled.
    func startConsumer(_ pipeline: String) throws -> ChildProcess {
        let file = path("c-\(UUID().uuidString).yaml")
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        return try startRivulet(["run", file], output: .null, error: .pipe)
    }

    func lines(_ name: String) -> [String] {
        ((try? String(contentsOfFile: path(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The `id` field of each line (read by hand: tens of thousands of lines are read often).
    func ids(_ name: String) -> [Int] {
        lines(name).compactMap { line in
            guard let key = line.range(of: "\"id\":") else { return nil }
            return Int(line[key.upperBound...].prefix(while: \.isNumber))
        }
    }

    /// Waits until `name` has at least `count` lines (or 30 s).
    func waitForLines(_ name: String, atLeast count: Int) {
        let deadline = Date(timeIntervalSinceNow: 30)
        while lines(name).count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }

    /// Waits (up to 30 s) until the file holds every id of `expected`: at-least-once delivery may
    /// write some twice (a server restarted before their acknowledgements reached it), so its lines
    /// are not counted.
    func waitForIDs(_ name: String, _ expected: Set<Int>) {
        let deadline = Date(timeIntervalSinceNow: 30)
        while !expected.isSubset(of: Set(ids(name))) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }

    /// Signals a runner and waits for it: its exit status and what it wrote on stderr.
    func stop(_ process: ChildProcess, _ signal: Int32 = SIGTERM) -> (Int32, String) {
        process.send(signal)
        let output = process.communicate(input: [], timeout: 60)
        let earlier = stderrRead.removeValue(forKey: ObjectIdentifier(process)) ?? ""
        return (output.termination.status, earlier + String(decoding: output.standardError, as: UTF8.self))
    }

    /// What `waitForStderr` read of each runner's stderr, so that `stop` can show all of it.
    private var stderrRead: [ObjectIdentifier: String] = [:]

    /// Runs `body` with a JetStream context of the test's server.
    func withJetStream<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        var connection: OpaquePointer?
        guard natsConnection_ConnectTo(&connection, natsURL) == NATS_OK, let connection else {
            throw CocoaError(.fileReadUnknown)
        }
        defer { natsConnection_Destroy(connection) }
        var js: OpaquePointer?
        guard natsConnection_JetStream(&js, connection, nil) == NATS_OK, let js else {
            throw CocoaError(.fileReadUnknown)
        }
        defer { jsCtx_Destroy(js) }
        return try body(js)
    }

    /// How many messages `stream` stores.
    func storedMessages(_ stream: String) throws -> UInt64 {
        try withJetStream { js in
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var code = jsErrCode(rawValue: 0)
            guard js_GetStreamInfo(&info, js, stream, nil, &code) == NATS_OK, let info else { return 0 }
            defer { jsStreamInfo_Destroy(info) }
            return info.pointee.State.Msgs
        }
    }

    /// Waits (`seconds` at most) until a runner has written `text` on stderr (since the last
    /// wait); what it read is kept for `stop`.
    func waitForStderr(_ process: ChildProcess, containing text: String, seconds: Double = 10) {
        var seen = ""
        var buffer = [UInt8](repeating: 0, count: 1024)
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !seen.contains(text), Date() < deadline {
            var poller = pollfd(fd: process.standardError, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = read(process.standardError, &buffer, buffer.count)
            guard count > 0 else { break }
            seen += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        stderrRead[ObjectIdentifier(process), default: ""] += seen
    }
}

/// NATS binary tests against one `nats-server` of their own, started for each test.
class OneNATSServerTestCase: NATSTestCase {
    var server: NATSServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    override var natsURL: String { server.url }
}

/// NATS binary tests that start, each as it needs, one server or a three-node cluster of their
/// own; whichever was started is stopped after each test.
class NATSServerOrClusterTestCase: NATSTestCase {
    var server: NATSServer?
    var cluster: NATSCluster?

    override var natsURL: String { cluster?.url ?? server?.url ?? "" }

    override func tearDown() {
        server?.stop()
        cluster?.stop()
        super.tearDown()
    }
}
