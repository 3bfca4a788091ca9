import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet run --metrics ADDRESS` against the binary: counters that grow with the right labels,
/// `/health`, `/ready` before and after a source connects, `/stats`, the one address listened
/// on, and a port in use.
final class MetricsEndpointTests: BinaryTestCase {
    /// Calls `body` (connect, bind) with 127.0.0.1:`port` as a socket address.
    static func withLoopback(_ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// A GET on 127.0.0.1:`port`: the status and the body (nil when nothing answers).
    static func get(_ port: Int, _ path: String) -> (status: Int, body: String)? {
        exchange(port, "GET", path)
    }

    /// One request on 127.0.0.1:`port` (a JSON body, if given), HTTP/1.0 or 1.1 with the
    /// connection closed after it (chromedriver answers only 1.1): the status and the body.
    static func exchange(_ port: Int, _ method: String, _ path: String, body: [UInt8]? = nil, version: String = "1.0")
        -> (status: Int, body: String)?
    {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        guard withLoopback(port, { connect(descriptor, $0, $1) }) == 0 else { return nil }
        var head =
            version == "1.0"
            ? "\(method) \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n"
            : "\(method) \(path) HTTP/\(version)\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        guard write(descriptor, request, request.count) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            response += buffer[0..<count]
            // A body of known length is complete (chromedriver says close but keeps the socket).
            if let length = Self.completeLength(response), response.count >= length { break }
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n"),
            let status = Int(text.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return (status, String(text[split.upperBound...]))
    }

    /// The whole response's length once its head is in and names a Content-Length.
    static func completeLength(_ response: [UInt8]) -> Int? {
        let text = String(decoding: response, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        for line in text[..<end.lowerBound].split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length",
                let length = Int(parts[1].trimmingCharacters(in: .whitespaces))
            {
                return text[..<end.upperBound].utf8.count + length
            }
        }
        return nil
    }

    /// The value of the sample of `metric` whose labels include every one of `labels`.
    /// The metrics page, once `metric` with `labels` reads `value` (or after 10 s).
    static func metrics(_ port: Int, once metric: String, _ labels: [String], is value: Double) -> String {
        var metrics = ""
        let deadline = Date(timeIntervalSinceNow: 10)
        repeat {
            Thread.sleep(forTimeInterval: 0.05)
            metrics = get(port, "/metrics")?.body ?? ""
        } while sample(metrics, metric, labels) != value && Date() < deadline
        return metrics
    }

    static func sample(_ text: String, _ metric: String, _ labels: [String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(metric + "{") {
            guard labels.allSatisfy({ line.contains($0) }), let value = line.split(separator: " ").last else {
                continue
            }
            return Double(value)
        }
        return nil
    }

    /// The TCP addresses `pid` listens on, as /proc shows them (`0100007F:1F90`).
    static func listeningAddresses(of pid: Int32) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let inodes = Set(
            fds.compactMap { fd -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst(8).dropLast())
            })
        var addresses: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // local_address is field 1, st field 3 (0A: LISTEN), inode field 9.
                if fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])) {
                    addresses.append(String(fields[1]))
                }
            }
        }
        return addresses
    }

    func testCountersGrowWithTheirLabelsAndTheOtherPathsAnswer() throws {
        let (run, port) = try startWatchedCounter()
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        Thread.sleep(forTimeInterval: 0.3)
        let first = try XCTUnwrap(Self.get(port, "/metrics"))
        XCTAssertEqual(first.status, 200)
        let source = [#"pipeline="watched""#, #"kind="source""#, #"component="interval""#, #"place="source""#]
        let before = try XCTUnwrap(Self.sample(first.body, "rivulet_elements_out_total", source), first.body)
        Thread.sleep(forTimeInterval: 0.3)
        let second = try XCTUnwrap(Self.get(port, "/metrics")).body
        let after = try XCTUnwrap(Self.sample(second, "rivulet_elements_out_total", source), second)
        XCTAssertGreaterThan(after, before, "the source's counter grew between two scrapes")
        let filterOut = try XCTUnwrap(
            Self.sample(second, "rivulet_elements_out_total", [#"component="filter""#, #"place="ops.0""#]), second)
        let filterIn = try XCTUnwrap(
            Self.sample(second, "rivulet_elements_in_total", [#"component="filter""#, #"place="ops.0""#]), second)
        XCTAssertLessThan(filterOut, filterIn, "the filter passes about half")
        XCTAssertNotNil(
            Self.sample(
                second, "rivulet_elements_in_total", [#"kind="sink""#, #"component="file""#, #"place="sink""#]),
            second)
        assertContains(second, "# TYPE rivulet_elements_out_total counter", #"rivulet_ready{pipeline="watched"} 1"#)

        XCTAssertEqual(Self.get(port, "/health")?.status, 200)
        XCTAssertEqual(Self.get(port, "/ready")?.status, 200)
        XCTAssertEqual(Self.get(port, "/nope")?.status, 404)
        let stats = try XCTUnwrap(Self.get(port, "/stats"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any])
        let components = try XCTUnwrap(object["components"] as? [[String: Any]])
        XCTAssertEqual(components.compactMap { $0["place"] as? String }, ["source", "ops.0", "ops.1", "sink"])
        XCTAssertEqual(object["ready"] as? Bool, true)

        // Only the address given is listened on.
        XCTAssertEqual(Self.listeningAddresses(of: run.pid), [String(format: "0100007F:%04X", port)])

        run.send(SIGTERM)
        let ended = run.communicate(input: [], timeout: 30)
        XCTAssertEqual(ended.termination.status, 143, String(decoding: ended.standardError, as: UTF8.self))
        XCTAssertTrue(
            String(decoding: ended.standardError, as: UTF8.self).contains(
                "metrics: serving /metrics, /health, /ready and /stats on http://127.0.0.1:\(port)"))
    }

    func testAPortInUseAndABadAddressAreClearErrors() throws {
        let port = HTTPServerSourceTests.freePort()
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        XCTAssertEqual(Self.withLoopback(port) { bind(holder, $0, $1) }, 0)
        XCTAssertEqual(listen(holder, 1), 0)
        let busy = try run("source: { events: [] }\nsink: stdout\n", ["--metrics", "127.0.0.1:\(port)"])
        XCTAssertEqual(busy.status, 2, busy.stderr)
        assertContains(
            busy.stderr, "error: --metrics: cannot listen on 127.0.0.1:\(port): the address is already in use")

        let bad = try run("source: { events: [] }\nsink: stdout\n", ["--metrics", "9464"])
        XCTAssertNotEqual(bad.status, 0)
        assertContains(bad.stderr, "--metrics expects HOST:PORT")
        // `*` is no address: it was bound to [::1] and printed as http://*:PORT.
        for address in ["*:\(port)", "::1:\(port)", "a b:\(port)"] {
            let refused = try run("source: { events: [] }\nsink: stdout\n", ["--metrics", address])
            XCTAssertEqual(refused.status, 2, "\(address): \(refused.stderr)")
            assertContains(refused.stderr, "(0.0.0.0:9464 for every address)")
        }
    }

    func testAnHTTPSourceCountsItsRequestsAndTheirDurations() throws {
        // Pages of two items, page 3 answered only after 30 s: the run is busy while it is scraped.
        let server = try serve { request, count in
            let page = Int(request.query["page"] ?? "") ?? 0
            if page == 2 && count == 1 { return .json("{}", status: 503) }
            return .json("[{\"p\":\(page)},{\"p\":\(page)}]", delay: page == 3 ? 30 : 0)
        }
        let (run, port) = try startWatched(
            """
            source: { http: { url: "\(server.baseURL)/items", paginate: page, retry: { backoff: 10ms } } }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let deadline = Date(timeIntervalSinceNow: 10)
        while server.received.count < 4 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let metrics = try XCTUnwrap(Self.get(port, "/metrics")).body
        let source = [#"component="http""#, #"place="source""#]
        XCTAssertEqual(Self.sample(metrics, "rivulet_http_requests_total", source + [#"status="2xx""#]), 2, metrics)
        XCTAssertEqual(Self.sample(metrics, "rivulet_http_requests_total", source + [#"status="5xx""#]), 1, metrics)
        XCTAssertEqual(Self.sample(metrics, "rivulet_http_retries_total", source), 1, metrics)
        XCTAssertEqual(Self.sample(metrics, "rivulet_http_request_duration_seconds_count", source), 3, metrics)
        assertContains(metrics, "# TYPE rivulet_http_request_duration_seconds histogram")
    }

    func testAnInnerHTTPSourceCountsOnItsOwnerAndCheckpointsAreTimed() throws {
        // The second request waits 30 s: the run is busy while it is scraped.
        let server = try serve { request, _ in
            .json("{\"q\":\"\(request.query["q"] ?? "")\"}", delay: request.query["q"] == "b" ? 30 : 0)
        }
        let (run, port) = try startWatched(
            """
            source: { events: [{ at: 0ms, next: a }, { at: 100ms, next: b }] }
            ops:
              - flatMapLatest:
                  source: { http: { url: "\(server.baseURL)/search?q={{ . }}" } }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let deadline = Date(timeIntervalSinceNow: 10)
        while server.received.count < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let metrics = try XCTUnwrap(Self.get(port, "/metrics")).body
        let owner = [#"component="flatMapLatest""#, #"place="ops.0""#]
        XCTAssertEqual(Self.sample(metrics, "rivulet_http_requests_total", owner + [#"status="2xx""#]), 1, metrics)
        XCTAssertEqual(Self.sample(metrics, "rivulet_http_request_duration_seconds_count", owner), 1, metrics)
        run.send(SIGKILL)
        _ = run.wait()

        let (checkpointed, statePort) = try startWatched(
            """
            source: { interval: 10ms }
            sink: { file: \(directory.appendingPathComponent("ticks.jsonl").path) }
            """, name: "ticks",
            arguments: ["--state", directory.appendingPathComponent("state.db").path, "--checkpoint-interval", "50ms"])
        defer { if checkpointed.exited() == nil { checkpointed.send(SIGKILL) } }
        Thread.sleep(forTimeInterval: 0.5)
        let timed = try XCTUnwrap(Self.get(statePort, "/metrics")).body
        let checkpoints = try XCTUnwrap(
            Self.sample(timed, "rivulet_checkpoint_duration_seconds_count", [#"pipeline="ticks""#]), timed)
        XCTAssertGreaterThan(checkpoints, 2, "one every 50 ms:\n\(timed)")
        assertContains(timed, "# TYPE rivulet_checkpoint_duration_seconds histogram")
    }

    func testSkippedElementsAndStandardOutputBytesAreCounted() throws {
        let (run, port) = try startWatched(
            """
            source: { events: [{ at: 0ms, next: ab }, { at: 0ms, next: 5 }, { at: 0ms, next: abc }, { at: 30s, next: x }] }
            ops:
              - map: len(.)
                onError: skip
            sink: stdout
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let metrics = Self.metrics(port, once: "rivulet_sink_bytes_total", [#"place="sink""#], is: 4)
        XCTAssertEqual(Self.sample(metrics, "rivulet_sink_bytes_total", [#"place="sink""#]), 4, "2\\n3\\n: \(metrics)")
        XCTAssertGreaterThanOrEqual(Self.sample(metrics, "rivulet_sink_writes_total", [#"place="sink""#]) ?? 0, 1)
        XCTAssertEqual(
            Self.sample(metrics, "rivulet_elements_dropped_total", [#"component="map""#, #"place="ops.0""#]), 1, metrics
        )
    }

    func testLateElementsOnEventTimeAreCounted() throws {
        // 10 s, 30 s (the watermark goes to 25 s), then 12 s and 20 s: behind it, late.
        let (run, port) = try startWatched(
            """
            source:
              events:
                - { at: 0ms, next: { t: 10000 } }
                - { at: 0ms, next: { t: 30000 } }
                - { at: 0ms, next: { t: 12000 } }
                - { at: 0ms, next: { t: 20000 } }
                - { at: 30s, next: { t: 40000 } }
            eventTime: { time: .t, maxDelay: 5s }
            sink: stdout
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let metrics = Self.metrics(port, once: "rivulet_elements_late_total", [], is: 2)
        XCTAssertEqual(
            Self.sample(metrics, "rivulet_elements_late_total", [#"component="eventTime""#, #"place="ops.0""#]), 2,
            metrics)
    }

    func testPartitionByCountsTheElementsOfEachPartition() throws {
        // Keys a, b, c: FNV-1a 32 modulo 4 puts a in 0, b in 1, c in 2.
        let (run, port) = try startWatched(
            """
            source: { events: [{ at: 0ms, next: a }, { at: 0ms, next: b }, { at: 0ms, next: a }, { at: 0ms, next: c }, { at: 30s, next: x }] }
            ops:
              - partitionBy: { key: ., partitions: 4, ops: [ { map: . } ] }
            sink: stdout
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let metrics = Self.metrics(port, once: "rivulet_partition_elements_total", [#"partition="0""#], is: 2)
        let place = [#"component="partitionBy""#, #"place="ops.0""#]
        XCTAssertEqual(
            Self.sample(metrics, "rivulet_partition_elements_total", place + [#"partition="0""#]), 2, metrics)
        XCTAssertEqual(
            Self.sample(metrics, "rivulet_partition_elements_total", place + [#"partition="1""#]), 1, metrics)
        XCTAssertEqual(
            Self.sample(metrics, "rivulet_partition_elements_total", place + [#"partition="2""#]), 1, metrics)
    }

    /// A runner of a group shows the partitions it holds and each partition's lag.
    func testAGroupRunnerShowsItsPartitionsAndTheirLag() throws {
        let server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
        defer { server.stop() }
        let publish = directory.appendingPathComponent("publish.yaml").path
        try """
        source: { events: [{ at: 0ms, next: { customer: a } }, { at: 0ms, next: { customer: b } }, { at: 1ms, complete: true }] }
        sink: { nats: { url: "\(server.url)", subject: orders, partitionBy: .customer, partitions: 4, stream: ORDERS, create: true } }
        """.write(toFile: publish, atomically: true, encoding: .utf8)
        XCTAssertEqual(try runRivulet(["run", publish]).status, 0)
        let (run, port) = try startWatched(
            """
            source: { nats: { url: "\(server.url)", stream: ORDERS, subject: orders, group: g, partitions: 4, leaseTimeout: 3s } }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let place = [#"component="nats""#, #"place="source""#]
        // Each partition's consumer is made by its reader: its lag shows from the round after.
        var metrics = ""
        let deadline = Date(timeIntervalSinceNow: 10)
        repeat {
            Thread.sleep(forTimeInterval: 0.1)
            metrics = Self.get(port, "/metrics")?.body ?? ""
        } while (0..<4).contains(where: {
            Self.sample(metrics, "rivulet_nats_partition_pending", place + [#"partition="\#($0)""#]) == nil
        }) && Date() < deadline
        XCTAssertEqual(Self.sample(metrics, "rivulet_nats_partitions_held", place), 4, metrics)
        for partition in 0..<4 {
            let labels = place + [#"partition="\#(partition)""#]
            XCTAssertEqual(Self.sample(metrics, "rivulet_nats_partition_held", labels), 1, metrics)
            XCTAssertNotNil(Self.sample(metrics, "rivulet_nats_partition_pending", labels), metrics)
            XCTAssertNotNil(Self.sample(metrics, "rivulet_nats_pending_acks", labels), "one a partition: \(metrics)")
        }
        // `/stats` (and so the live view) has the same by partition, one row each, in order.
        let stats = try XCTUnwrap(Self.get(port, "/stats")).body
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(stats.utf8)) as? [String: Any])
        let source = try XCTUnwrap(
            (object["components"] as? [[String: Any]])?.first { $0["place"] as? String == "source" }, stats)
        let table = try XCTUnwrap((source["byLabel"] as? [[String: Any]])?.first, stats)
        XCTAssertEqual(table["label"] as? String, "partition")
        let columns = try XCTUnwrap(table["columns"] as? [String])
        XCTAssertEqual(columns, ["nats_partition_held", "nats_partition_pending", "nats_pending_acks"])
        let rows = try XCTUnwrap(table["rows"] as? [[Any]])
        XCTAssertEqual(rows.map { $0.first as? String }, ["0", "1", "2", "3"], stats)
        for row in rows { XCTAssertEqual(row[1] as? Int, 1, "held here: \(stats)") }
        run.send(SIGTERM)
        XCTAssertEqual(run.communicate(input: [], timeout: 30).termination.status, 143)
    }

    func testReadyOnlyOnceTheNATSSourceIsConnected() throws {
        let server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
        defer { server.stop() }
        // A server that does not answer yet: the runner is still connecting.
        server.process.send(SIGSTOP)
        let (run, port) = try startWatched(
            """
            source: { nats: { url: "\(server.url)", stream: ORDERS, subject: "orders.>", durable: w, create: true } }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        XCTAssertEqual(Self.get(port, "/ready")?.status, 503, "connecting")
        XCTAssertEqual(Self.get(port, "/health")?.status, 200, "live all the same")
        server.process.send(SIGCONT)
        let deadline = Date(timeIntervalSinceNow: 10)
        while Self.get(port, "/ready")?.status != 200 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(Self.get(port, "/ready")?.status, 200, "ready once the consumer is in place")
        let metrics = try XCTUnwrap(Self.get(port, "/metrics")).body
        XCTAssertEqual(
            Self.sample(metrics, "rivulet_nats_pending_acks", [#"component="nats""#, #"place="source""#]), 0, metrics)
        run.send(SIGTERM)
        XCTAssertEqual(run.communicate(input: [], timeout: 30).termination.status, 143)
    }
}

extension BinaryTestCase {
    /// Starts `pipeline` with --metrics on a free port; returns once /health answers.
    func startWatched(_ pipeline: String, name: String = "watched", arguments: [String] = []) throws -> (
        ChildProcess, Int
    ) {
        let file = directory.appendingPathComponent("\(name).yaml").path
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        let port = HTTPServerSourceTests.freePort()
        let process = try startRivulet(
            ["run", file, "--metrics", "127.0.0.1:\(port)"] + arguments, output: .null, error: .pipe)
        let deadline = Date(timeIntervalSinceNow: 10)
        while MetricsEndpointTests.get(port, "/health") == nil && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        return (process, port)
    }

    /// `interval: 10ms` → `filter: . % 2 == 0` → `map: {n: .}` → a file, watched; its port.
    func startWatchedCounter(every period: String = "10ms") throws -> (ChildProcess, Int) {
        try startWatched(
            """
            source: { interval: \(period) }
            ops:
              - filter: . % 2 == 0
              - map: { n: . }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """)
    }
}
