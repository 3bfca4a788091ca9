import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet run --metrics ADDRESS` against the binary: counters that grow with the right labels,
/// `/health`, `/ready` before and after a source connects, `/stats`, the one address listened
/// on, and a port in use.
final class MetricsEndpointTests: BinaryTestCase {
    func testCountersGrowWithTheirLabelsAndTheOtherPathsAnswer() throws {
        let (run, port) = try startWatchedCounter()
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        Thread.sleep(forTimeInterval: 0.3)
        let first = try XCTUnwrap(LoopbackHTTP.get(port, "/metrics"))
        XCTAssertEqual(first.status, 200)
        let source = [#"pipeline="watched""#, #"kind="source""#, #"component="interval""#, #"place="source""#]
        let before = try XCTUnwrap(LoopbackHTTP.sample(first.body, "rivulet_elements_out_total", source), first.body)
        Thread.sleep(forTimeInterval: 0.3)
        let second = try XCTUnwrap(LoopbackHTTP.get(port, "/metrics")).body
        let after = try XCTUnwrap(LoopbackHTTP.sample(second, "rivulet_elements_out_total", source), second)
        XCTAssertGreaterThan(after, before, "the source's counter grew between two scrapes")
        let filterOut = try XCTUnwrap(
            LoopbackHTTP.sample(second, "rivulet_elements_out_total", [#"component="filter""#, #"place="ops.0""#]),
            second)
        let filterIn = try XCTUnwrap(
            LoopbackHTTP.sample(second, "rivulet_elements_in_total", [#"component="filter""#, #"place="ops.0""#]),
            second)
        XCTAssertLessThan(filterOut, filterIn, "the filter passes about half")
        XCTAssertNotNil(
            LoopbackHTTP.sample(
                second, "rivulet_elements_in_total", [#"kind="sink""#, #"component="file""#, #"place="sink""#]),
            second)
        assertContains(second, "# TYPE rivulet_elements_out_total counter", #"rivulet_ready{pipeline="watched"} 1"#)

        XCTAssertEqual(LoopbackHTTP.get(port, "/health")?.status, 200)
        XCTAssertEqual(LoopbackHTTP.get(port, "/ready")?.status, 200)
        XCTAssertEqual(LoopbackHTTP.get(port, "/nope")?.status, 404)
        let stats = try XCTUnwrap(LoopbackHTTP.get(port, "/stats"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any])
        let components = try XCTUnwrap(object["components"] as? [[String: Any]])
        XCTAssertEqual(components.compactMap { $0["place"] as? String }, ["source", "ops.0", "ops.1", "sink"])
        XCTAssertEqual(object["ready"] as? Bool, true)

        // Only the address given is listened on.
        XCTAssertEqual(LoopbackHTTP.listeningAddresses(of: run.pid), [String(format: "0100007F:%04X", port)])

        run.send(SIGTERM)
        let ended = run.communicate(input: [], timeout: 30)
        XCTAssertEqual(ended.termination.status, 143, String(decoding: ended.standardError, as: UTF8.self))
        XCTAssertTrue(
            String(decoding: ended.standardError, as: UTF8.self).contains(
                "metrics: serving /metrics, /health, /ready and /stats on http://127.0.0.1:\(port)"))
    }

    func testAPortInUseAndABadAddressAreClearErrors() throws {
        let port = freeLoopbackPort()
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        XCTAssertEqual(LoopbackHTTP.withLoopback(port) { bind(holder, $0, $1) }, 0)
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
        let metrics = try XCTUnwrap(LoopbackHTTP.get(port, "/metrics")).body
        let source = [#"component="http""#, #"place="source""#]
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_http_requests_total", source + [#"status="2xx""#]), 2, metrics)
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_http_requests_total", source + [#"status="5xx""#]), 1, metrics)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_http_retries_total", source), 1, metrics)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_http_request_duration_seconds_count", source), 3, metrics)
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
        let metrics = try XCTUnwrap(LoopbackHTTP.get(port, "/metrics")).body
        let owner = [#"component="flatMapLatest""#, #"place="ops.0""#]
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_http_requests_total", owner + [#"status="2xx""#]), 1, metrics)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_http_request_duration_seconds_count", owner), 1, metrics)
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
        let timed = try XCTUnwrap(LoopbackHTTP.get(statePort, "/metrics")).body
        let checkpoints = try XCTUnwrap(
            LoopbackHTTP.sample(timed, "rivulet_checkpoint_duration_seconds_count", [#"pipeline="ticks""#]), timed)
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
        let metrics = LoopbackHTTP.metrics(port, once: "rivulet_sink_bytes_total", [#"place="sink""#], is: 4)
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_sink_bytes_total", [#"place="sink""#]), 4, "2\\n3\\n: \(metrics)")
        XCTAssertGreaterThanOrEqual(
            LoopbackHTTP.sample(metrics, "rivulet_sink_writes_total", [#"place="sink""#]) ?? 0, 1)
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_elements_dropped_total", [#"component="map""#, #"place="ops.0""#]), 1,
            metrics
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
        let metrics = LoopbackHTTP.metrics(port, once: "rivulet_elements_late_total", [], is: 2)
        XCTAssertEqual(
            LoopbackHTTP.sample(
                metrics, "rivulet_elements_late_total", [#"component="eventTime""#, #"place="ops.0""#]), 2,
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
        let metrics = LoopbackHTTP.metrics(port, once: "rivulet_partition_elements_total", [#"partition="0""#], is: 2)
        let place = [#"component="partitionBy""#, #"place="ops.0""#]
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_partition_elements_total", place + [#"partition="0""#]), 2, metrics)
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_partition_elements_total", place + [#"partition="1""#]), 1, metrics)
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_partition_elements_total", place + [#"partition="2""#]), 1, metrics)
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
            metrics = LoopbackHTTP.get(port, "/metrics")?.body ?? ""
        } while (0..<4).contains(where: {
            LoopbackHTTP.sample(metrics, "rivulet_nats_partition_pending", place + [#"partition="\#($0)""#]) == nil
        }) && Date() < deadline
        XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_nats_partitions_held", place), 4, metrics)
        for partition in 0..<4 {
            let labels = place + [#"partition="\#(partition)""#]
            XCTAssertEqual(LoopbackHTTP.sample(metrics, "rivulet_nats_partition_held", labels), 1, metrics)
            XCTAssertNotNil(LoopbackHTTP.sample(metrics, "rivulet_nats_partition_pending", labels), metrics)
            XCTAssertNotNil(
                LoopbackHTTP.sample(metrics, "rivulet_nats_pending_acks", labels), "one a partition: \(metrics)")
        }
        // `/stats` (and so the live view) has the same by partition, one row each, in order.
        let stats = try XCTUnwrap(LoopbackHTTP.get(port, "/stats")).body
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
        XCTAssertEqual(LoopbackHTTP.get(port, "/ready")?.status, 503, "connecting")
        XCTAssertEqual(LoopbackHTTP.get(port, "/health")?.status, 200, "live all the same")
        server.process.send(SIGCONT)
        let deadline = Date(timeIntervalSinceNow: 10)
        while LoopbackHTTP.get(port, "/ready")?.status != 200 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(LoopbackHTTP.get(port, "/ready")?.status, 200, "ready once the consumer is in place")
        let metrics = try XCTUnwrap(LoopbackHTTP.get(port, "/metrics")).body
        XCTAssertEqual(
            LoopbackHTTP.sample(metrics, "rivulet_nats_pending_acks", [#"component="nats""#, #"place="source""#]), 0,
            metrics)
        run.send(SIGTERM)
        XCTAssertEqual(run.communicate(input: [], timeout: 30).termination.status, 143)
    }
}
