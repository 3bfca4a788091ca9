import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// The `httpServer` source through the binary: a real client (Python's http.client) posts while
/// the pipeline runs on the real clock, stopped by --until.
final class HTTPServerSourceTests: BinaryTestCase {
    /// Python that waits (10 s at most) until something listens on 127.0.0.1:`port`.
    static let waitForServer = """
        deadline = time.time() + 10
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5); c.connect(); c.close(); break
            except OSError:
                if time.time() > deadline: sys.exit("server never came up")
                time.sleep(0.02)
        """

    /// Sends the requests of plan.json (each {path, body, headers?, method?}) once the server is up,
    /// `threads` at a time, and writes one JSON line per answer: {n, status, body, retryAfter}.
    static let client = """
        import http.client, json, sys, threading, time
        plan = json.load(open(sys.argv[1]))
        port = int(sys.argv[2])
        threads = int(sys.argv[3])
        \(waitForServer)
        results = [None] * len(plan)
        def send(indices):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for i in indices:
                r = plan[i]
                c.request(r.get("method", "POST"), r["path"], body=r["body"].encode(), headers=r.get("headers", {}))
                a = c.getresponse()
                results[i] = {"n": i, "status": a.status, "body": a.read().decode(), "retryAfter": a.getheader("Retry-After")}
                if a.getheader("Connection") == "close":
                    c.close(); c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        workers = [threading.Thread(target=send, args=(range(t, len(plan), threads),)) for t in range(threads)]
        for w in workers: w.start()
        for w in workers: w.join()
        with open(sys.argv[4], "w") as out:
            for r in results: out.write(json.dumps(r) + "\\n")
        # Every request is answered: note the run's peak memory, then stop it as Ctrl-C would.
        import os, signal
        time.sleep(0.3)
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                command = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
            except OSError:
                continue
            if sys.argv[5].encode() in command and b"run" in command:
                status = open(f"/proc/{pid}/status").read()
                peak = [l for l in status.splitlines() if l.startswith("VmHWM")][0].split()[1]
                open(sys.argv[6], "w").write(peak)
                os.kill(int(pid), signal.SIGINT)
        """

    struct Answer: Decodable {
        let n: Int
        let status: Int
        let body: String
        let retryAfter: String?
    }

    /// The peak resident memory of the last run, in KiB, read just before the client stopped it.
    var peakKilobytes: Int?

    /// Runs `pipeline` (with PORT replaced) while the client sends `plan`, until the client has
    /// every answer and stops it with SIGINT (or `limit` passes).
    func exchange(
        _ pipeline: String, plan: [[String: Any]], threads: Int = 1, limit: String = "30s",
        environment: [String: String] = [:]
    ) throws -> (result: ProcessResult, answers: [Answer]) {
        let port = freeLoopbackPort()
        let pipelineFile = directory.appendingPathComponent("webhook-\(port).yaml")
        try pipeline.replacingOccurrences(of: "PORT", with: String(port)).write(
            to: pipelineFile, atomically: true, encoding: .utf8)
        let peakFile = directory.appendingPathComponent("peak-kb")
        try Self.client.write(to: directory.appendingPathComponent("client.py"), atomically: true, encoding: .utf8)
        try JSONSerialization.data(withJSONObject: plan).write(to: directory.appendingPathComponent("plan.json"))
        let answersFile = directory.appendingPathComponent("answers.jsonl")
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = [
            "python3", directory.appendingPathComponent("client.py").path,
            directory.appendingPathComponent("plan.json").path,
            String(port), String(threads), answersFile.path, pipelineFile.path, peakFile.path,
        ]
        try client.run()
        let result = try runRivulet(["run", pipelineFile.path, "--until", limit], environment: environment)
        client.waitUntilExit()
        peakKilobytes = (try? String(contentsOf: peakFile, encoding: .utf8)).flatMap { Int($0) }
        let text = (try? String(contentsOf: answersFile, encoding: .utf8)) ?? ""
        let answers = try text.split(separator: "\n").map {
            try JSONDecoder().decode(Answer.self, from: Data($0.utf8))
        }
        guard answers.count == plan.count else {
            throw NSError(
                domain: "HTTPServerSourceTests", code: 1,
                userInfo: [NSLocalizedDescriptionKey: "\(answers.count) of \(plan.count) answered: \(result.stderr)"])
        }
        return (result, answers)
    }

    func testJSONArraysAndJSONLinesAreElementsAndBadRequestsAreRefused() throws {
        let token = ["Authorization": "Bearer s3cret"]
        let plan: [[String: Any]] = [
            ["path": "/orders", "body": "{\"id\": 1}", "headers": token],
            ["path": "/orders", "body": "[{\"id\": 2}, {\"id\": 3}]", "headers": token],
            ["path": "/orders", "body": "{\"id\": 4}\n{\"id\": 5}\n", "headers": token],
            ["path": "/orders", "body": "{\"id\": 6}\n{\"id\": \n", "headers": token],
            ["path": "/orders", "body": "{\"id\": 7}", "headers": ["Authorization": "Bearer wrong"]],
            ["path": "/orders", "body": "{\"id\": 8}"],
            ["path": "/orders", "body": "[" + String(repeating: "1,", count: 600) + "1]", "headers": token],
            ["path": "/other", "body": "{\"id\": 9}", "headers": token],
            ["path": "/orders", "body": "", "headers": token, "method": "GET"],
            ["path": "/orders", "body": "", "headers": token],
        ]
        let (result, answers) = try exchange(
            """
            source: { httpServer: { address: "127.0.0.1:PORT", path: /orders, token: "${HOOK_TOKEN}", maxBodyBytes: 1000 } }
            sink: stdout
            """, plan: plan, environment: ["HOOK_TOKEN": "s3cret"])
        XCTAssertEqual(result.status, 130, "stopped by SIGINT: \(result.stderr)")
        XCTAssertEqual(answers.map(\.status), [202, 202, 202, 400, 401, 401, 413, 404, 405, 400])
        XCTAssertEqual(answers[1].body, "{\"accepted\":2}")
        XCTAssertEqual(
            answers[3].body, "{\"error\":\"line 2 is not JSON: unexpected end of input, expected a value at byte 7\"}")
        XCTAssertTrue(answers[6].body.contains("larger than maxBodyBytes (1000 bytes)"), answers[6].body)
        // A wrong token is not reported as a missing one.
        XCTAssertEqual(answers[4].body, "{\"error\":\"the bearer token is not the one this server takes\"}")
        XCTAssertEqual(
            answers[5].body, "{\"error\":\"a bearer token is required (Authorization: Bearer TOKEN)\"}")
        XCTAssertEqual(result.stdout, (1...5).map { "{\"id\":\($0)}\n" }.joined(), "nothing of a refused request")
        assertContains(result.stderr, "httpServer: listening on http://127.0.0.1:")
        XCTAssertFalse(result.stderr.contains("s3cret"))
    }

    func testAClientThatHalfClosesAfterItsRequestIsStillAnswered() throws {
        // As `nc -q`, some HTTP/1.0 clients and proxies do: the request, then shutdown(SHUT_WR),
        // then read the answer. 191-199 of 200 got none though all 200 were taken (and a sender
        // retrying them would have made duplicates).
        let port = freeLoopbackPort()
        let pipeline = directory.appendingPathComponent("half.yaml")
        try "source: { httpServer: { address: \"127.0.0.1:\(port)\", path: /orders } }\nsink: { file: orders.jsonl }\n"
            .write(to: pipeline, atomically: true, encoding: .utf8)
        let run = try startRivulet(["run", pipeline.path], output: .null, error: .pipe)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let client = try ChildProcess(
            executable: "/usr/bin/env",
            arguments: [
                "python3", "-c",
                """
                import http.client, socket, sys, time
                port = \(port)
                \(Self.waitForServer)
                statuses = []
                for i in range(200):
                    body = ('{"id": %d}' % i).encode()
                    s = socket.create_connection(("127.0.0.1", port), timeout=10)
                    s.sendall(b"POST /orders HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
                    s.shutdown(socket.SHUT_WR)
                    answer = b""
                    while True:
                        part = s.recv(4096)
                        if not part: break
                        answer += part
                    s.close()
                    statuses.append(answer.split(b" ")[1].decode() if answer else "none")
                print(" ".join(statuses))
                """,
            ], input: .null)
        let ended = client.communicate(timeout: 120)
        let statuses = String(decoding: ended.standardOutput, as: UTF8.self).split(separator: " ")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(statuses.count, 200, String(decoding: ended.standardError, as: UTF8.self))
        XCTAssertEqual(
            statuses.filter { $0 == "202" }.count, 200, "\(statuses.filter { $0 != "202" }.count) unanswered")
        run.send(SIGINT)
        _ = run.communicate(timeout: 30)
        let written = try String(contentsOf: directory.appendingPathComponent("orders.jsonl"), encoding: .utf8)
        XCTAssertEqual(written.split(separator: "\n").count, 200)
    }

    func testABurstBeyondTheQueueIsRefusedWithRetryAfterAndNothingAcceptedIsLost() throws {
        // SIGINT from the client ends the run; what was accepted is written in full.
        // A slow stage (a program that takes 20 ms an element) keeps the pipeline behind.
        try """
        import json, sys, time
        for line in sys.stdin:
            time.sleep(0.02)
            print(json.dumps({"emit": json.loads(line)["value"]}), flush=True)
            print(json.dumps({"done": True}), flush=True)
        """.write(to: directory.appendingPathComponent("slow.py"), atomically: true, encoding: .utf8)
        let plan: [[String: Any]] = (0..<60).map { ["path": "/", "body": "{\"n\": \($0)}"] }
        let (result, answers) = try exchange(
            """
            source: { httpServer: { address: "127.0.0.1:PORT", queue: 4 } }
            ops:
              - exec: [python3, ./slow.py]
            sink: { file: { path: accepted.jsonl } }
            """, plan: plan, threads: 20)
        XCTAssertEqual(result.status, 130, "stopped by SIGINT: \(result.stderr)")
        let accepted = Set(answers.filter { $0.status == 202 }.map(\.n))
        let refused = answers.filter { $0.status == 503 }
        XCTAssertFalse(refused.isEmpty, "the queue of 4 overflowed: \(answers.map(\.status))")
        XCTAssertEqual(accepted.count + refused.count, 60, "\(answers.map(\.status))")
        XCTAssertTrue(refused.allSatisfy { $0.retryAfter == "1" })
        let written = try String(contentsOf: directory.appendingPathComponent("accepted.jsonl"), encoding: .utf8)
        let writtenNumbers = try written.split(separator: "\n").map {
            try XCTUnwrap((try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Int])?["n"])
        }
        XCTAssertEqual(Set(writtenNumbers), accepted, "every accepted element was written, and only those")
        XCTAssertEqual(writtenNumbers.count, accepted.count)
    }

    func testAFloodKeepsMemoryBounded() throws {
        // 2,000 requests of 100 elements each (200,000 elements, about 6 MB of JSON) from 8
        // connections as fast as they go, into a pipeline that writes every element to a file.
        let body = "[" + (0..<100).map { "{\"id\": \($0), \"note\": \"flood\"}" }.joined(separator: ",") + "]"
        let plan: [[String: Any]] = (0..<2000).map { _ in ["path": "/", "body": body] }
        let (result, answers) = try exchange(
            """
            source: { httpServer: { address: "127.0.0.1:PORT", queue: 1000 } }
            sink: { file: { path: flood.jsonl } }
            """, plan: plan, threads: 8, limit: "60s")
        XCTAssertEqual(result.status, 130, "stopped by SIGINT: \(result.stderr)")
        let accepted = answers.filter { $0.status == 202 }.count
        let peak = try XCTUnwrap(peakKilobytes)
        print(
            "webhook flood: 2,000 requests of 100 elements, \(accepted) accepted, \(2000 - accepted) answered 503; peak RSS \(peak / 1024) MiB"
        )
        XCTAssertLessThan(peak, 150 * 1024, "memory stays bounded")
        let lines = try String(contentsOf: directory.appendingPathComponent("flood.jsonl"), encoding: .utf8)
            .split(separator: "\n").count
        XCTAssertEqual(lines, accepted * 100, "every accepted element was written")
        XCTAssertEqual(accepted + answers.filter { $0.status == 503 }.count, 2000)
    }

    /// Posts `bodies` to 127.0.0.1:`port`/events, one thread each, in the background; once all
    /// are answered it writes their statuses (in order) to `answers`.
    private func postInBackground(_ bodies: [String], port: Int, answers: URL) throws -> Process {
        let script = directory.appendingPathComponent("post.py")
        try """
        import http.client, json, sys, threading, time
        port, bodies, out = int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
        \(Self.waitForServer)
        statuses = [None] * len(bodies)
        def post(i):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request("POST", "/events", body=bodies[i].encode())
            statuses[i] = c.getresponse().status
        threads = [threading.Thread(target=post, args=(i,)) for i in range(len(bodies))]
        for t in threads: t.start()
        for t in threads: t.join()
        open(out, "w").write(json.dumps(statuses))
        """.write(to: script, atomically: true, encoding: .utf8)
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = [
            "python3", script.path, String(port),
            String(decoding: try JSONSerialization.data(withJSONObject: bodies), as: UTF8.self), answers.path,
        ]
        try client.run()
        return client
    }

    func testARequestIsAnsweredOnceItsElementsAreWrittenAndASignalWritesTheOpenWindow() throws {
        let bodies = [
            "{\"customer\": \"ada\", \"amount\": 10}", "{\"customer\": \"bob\", \"amount\": 20}",
            "{\"customer\": \"ada\", \"amount\": 30}",
        ]
        for respond in ["whenSafe", "immediately"] {
            let port = freeLoopbackPort()
            let database = directory.appendingPathComponent("totals-\(respond).db")
            let pipeline = directory.appendingPathComponent("totals-\(respond).yaml")
            try """
            source: { httpServer: { address: "127.0.0.1:\(port)", path: /events, respond: \(respond) } }
            ops:
              - aggregate: { by: .customer, every: 1h, fields: { n: count, total: { sum: .amount } } }
            sink: { sqlite: { path: \(database.path), table: totals } }
            """.write(to: pipeline, atomically: true, encoding: .utf8)
            let runner = try startRivulet(["run", pipeline.path], output: .null, error: .pipe)
            let answers = directory.appendingPathComponent("answers-\(respond).json")
            let client = try postInBackground(bodies, port: port, answers: answers)
            Thread.sleep(forTimeInterval: 2)
            // Held in the open window: not answered until written, unless told to answer at once.
            XCTAssertEqual(
                FileManager.default.fileExists(atPath: answers.path), respond == "immediately",
                "\(respond): answered before the window was written?")
            runner.send(SIGINT)
            let ended = runner.communicate(input: [], timeout: 30)
            client.waitUntilExit()
            XCTAssertEqual(ended.termination, .exited(130), String(decoding: ended.standardError, as: UTF8.self))
            XCTAssertEqual(try String(contentsOf: answers, encoding: .utf8), "[202, 202, 202]", respond)
            // The signal completed the source: the open window was written, every request counted once.
            let query = try ChildProcess(
                executable: "sqlite3",
                arguments: [database.path, "SELECT key, n, total FROM totals ORDER BY key"], input: .null)
            let rows = String(decoding: query.communicate(timeout: 30).standardOutput, as: UTF8.self)
            XCTAssertEqual(rows, "ada|2|40\nbob|1|20\n", respond)
        }
    }

    func testUnderStateARequestIsAnsweredAtTheCheckpointAndSurvivesSIGKILL() throws {
        let bodies = (1...3).map { "{\"customer\": \"c\($0 % 2)\", \"amount\": \($0 * 10)}" }
        let port = freeLoopbackPort()
        let output = directory.appendingPathComponent("totals.jsonl")
        let pipeline = directory.appendingPathComponent("totals.yaml")
        try """
        source: { httpServer: { address: "127.0.0.1:\(port)", path: /events } }
        ops:
          - aggregate: { by: .customer, every: 4s, fields: { n: count, total: { sum: .amount } } }
        sink: { file: \(output.path) }
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let state = directory.appendingPathComponent("state.db").path
        let arguments = ["run", pipeline.path, "--state", state, "--checkpoint-interval", "200ms"]
        let first = try startRivulet(arguments, output: .null, error: .pipe)
        let answers = directory.appendingPathComponent("answers.json")
        let client = try postInBackground(bodies, port: port, answers: answers)
        client.waitUntilExit()
        // Held in the open window, the requests were answered once a checkpoint kept them.
        XCTAssertEqual(try String(contentsOf: answers, encoding: .utf8), "[202, 202, 202]")
        first.send(SIGKILL)
        XCTAssertEqual(first.wait(), .signalled(SIGKILL))
        // Restored from the checkpoint, the window is written when its time is up, each post once.
        let second = try startRivulet(arguments, output: .null, error: .pipe)
        Thread.sleep(forTimeInterval: 4.5)
        second.send(SIGINT)
        let ended = second.communicate(input: [], timeout: 30)
        let stderr = String(decoding: ended.standardError, as: UTF8.self)
        XCTAssertEqual(ended.termination, .exited(130), stderr)
        assertContains(stderr, "resuming")
        let rows = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").sorted()
        XCTAssertEqual(
            rows,
            [#"{"key":"c0","start":0,"n":1,"total":20}"#, #"{"key":"c1","start":0,"n":2,"total":40}"#])
    }

    /// Posts `count` events {id, customer, amount} to 127.0.0.1:`port`/events, `threads` at a
    /// time, each tried again (after 50 ms) until it is answered 2xx: through refused connections
    /// while no runner listens, 503s while one stops. Appends a line to `progress` per event
    /// answered; writes the attempts per event to `attempts` at the end.
    private func postUntilAccepted(count: Int, port: Int, progress: URL, attempts: URL) throws -> Process {
        let script = directory.appendingPathComponent("retrying.py")
        try """
        import http.client, json, sys, threading, time
        port, count, progress, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
        tries = [0] * count
        lock = threading.Lock()
        def post(indices):
            for i in indices:
                body = json.dumps({"id": i, "customer": "c%d" % (i % 7), "amount": i % 13 + 1}).encode()
                while True:
                    tries[i] += 1
                    try:
                        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                        c.request("POST", "/events", body=body)
                        status = c.getresponse().status
                        c.close()
                        if 200 <= status < 300: break
                    except OSError:
                        pass
                    time.sleep(0.05)
                with lock:
                    with open(progress, "a") as p: p.write("%d\\n" % i)
        workers = [threading.Thread(target=post, args=(range(t, count, 8),)) for t in range(8)]
        for w in workers: w.start()
        for w in workers: w.join()
        open(out, "w").write(json.dumps(tries))
        """.write(to: script, atomically: true, encoding: .utf8)
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = ["python3", script.path, String(port), String(count), progress.path, attempts.path]
        try client.run()
        return client
    }

    func testAThousandRetriedPostsAreCountedExactlyOnceThroughASignalAndThreeSIGKILLs() throws {
        let port = freeLoopbackPort()
        let database = directory.appendingPathComponent("totals.db")
        let pipeline = directory.appendingPathComponent("totals.yaml")
        // dedupe by the event's id: a post kept by a checkpoint whose 202 was lost in the kill
        // comes again. The sink commits only at checkpoints, and its key makes a window written
        // again replace its row.
        try """
        name: webhook-totals
        source: { httpServer: { address: "127.0.0.1:\(port)", path: /events } }
        ops:
          - dedupe: { key: .id }
          - aggregate: { by: .customer, every: 500ms, fields: { n: count, total: { sum: .amount } } }
        sink: { sqlite: { path: \(database.path), table: totals, key: [key, start], batch: { count: 100000, period: 1h } } }
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let arguments = [
            "run", pipeline.path, "--state", directory.appendingPathComponent("state.db").path,
            "--checkpoint-interval", "100ms",
        ]
        let progress = directory.appendingPathComponent("progress.txt")
        let attemptsFile = directory.appendingPathComponent("attempts.json")
        let client = try postUntilAccepted(count: 1000, port: port, progress: progress, attempts: attemptsFile)
        func answered() -> Int {
            ((try? String(contentsOf: progress, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        func runUntil(answered target: Int, then signal: Int32) throws -> String {
            let runner = try startRivulet(arguments, output: .null, error: .pipe)
            let deadline = Date(timeIntervalSinceNow: 60)
            while answered() < target && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if target >= 1000 { Thread.sleep(forTimeInterval: 1.5) }  // the last windows close
            runner.send(signal)
            let ended = runner.communicate(input: [], timeout: 60)
            let stderr = String(decoding: ended.standardError, as: UTF8.self)
            XCTAssertEqual(ended.termination, signal == SIGKILL ? .signalled(SIGKILL) : .exited(130), stderr)
            return stderr
        }
        let interrupted = try runUntil(answered: 250, then: SIGINT)
        assertContains(interrupted, "is in the last checkpoint")
        // Each kill may fall between a checkpoint's sink commit and its save (a 202 sent too
        // early was lost there once): three of them.
        for target in [450, 650, 850] { _ = try runUntil(answered: target, then: SIGKILL) }
        let last = try runUntil(answered: 1000, then: SIGINT)
        assertContains(last, "resuming 'webhook-totals'")
        client.waitUntilExit()
        let attempts = try JSONDecoder().decode([Int].self, from: Data(contentsOf: attemptsFile))
        let query = try ChildProcess(
            executable: "sqlite3", arguments: [database.path, "SELECT sum(n), sum(total) FROM totals"], input: .null)
        let totals = String(decoding: query.communicate(timeout: 30).standardOutput, as: UTF8.self)
        XCTAssertEqual(totals, "1000|\((0..<1000).reduce(0) { $0 + $1 % 13 + 1 })\n")
        print("webhook: 1000 posts, \(attempts.reduce(0, +) - 1000) retries, totals \(totals)")
        XCTAssertGreaterThan(attempts.reduce(0, +), 1000, "some posts were tried again across the stops")
    }

    func testAnAddressInUseIsAClearError() throws {
        let busy = try serve { _, _ in .json("{}") }
        let result = try run(
            "source: { httpServer: { address: \"127.0.0.1:\(busy.port)\" } }\nsink: stdout\n", ["--until", "5s"])
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "error: httpServer: cannot listen on 127.0.0.1:\(busy.port): ")
    }
}
