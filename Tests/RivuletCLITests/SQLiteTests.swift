import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// The `sqlite` sink and source through the binary, the rows checked with the `sqlite3` shell.
final class SQLiteTests: BinaryTestCase {
    private var database: String { directory.appendingPathComponent("orders.db").path }

    private func sqlite3(_ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", database, sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Another program (Python's sqlite3) that runs `statements` on the database and holds what
    /// they lock for `seconds`; returned once the lock is held. Terminate it when done.
    private func holdLock(_ statements: String, seconds: Int = 8) throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            "import sqlite3,time,sys; c=sqlite3.connect(sys.argv[1], isolation_level=None); \(statements); print('held', flush=True); time.sleep(\(seconds))",
            database,
        ]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        _ = output.fileHandleForReading.availableData  // "held"
        return holder
    }

    private func writeOrders(_ orders: [String], options: String = "") throws -> ProcessResult {
        let events = orders.enumerated().map { "{ at: \($0.offset)ms, next: \($0.element) }" }.joined(separator: ", ")
        return try run(
            """
            source: { events: [\(events), { at: 100ms, complete: true }] }
            sink: { sqlite: { path: orders.db, table: orders\(options) } }
            """, ["--clock", "virtual"])
    }

    func testALateElementsUpdateOfAnAggregateReplacesItsRowByKey() throws {
        // Event times in seconds: 50 and 65 (user a), 80 moves the watermark to 70 s, closing
        // [0, 60); 58 comes 12 s behind it, within allowedLateness: a's row for [0, 60) is
        // emitted again with n 2 and update: true, and replaces the first.
        let times = [(50, "a"), (65, "b"), (80, "a"), (58, "a")]
        let events = times.map { "{ at: 0ms, next: { t: \($0.0)000, user: \($0.1) } }" }.joined(separator: ", ")
        let result = try run(
            """
            source: { events: [\(events), { at: 0ms, complete: true }] }
            eventTime: { time: .t, maxDelay: 10s }
            ops:
              - aggregate: { by: .user, every: 1m, allowedLateness: 30s, fields: { n: count } }
            sink: { sqlite: { path: orders.db, table: counts, key: [key, start] } }
            """, ["--clock", "virtual"])
        XCTAssertEqual(result.status, 0, result.stderr)
        // The table's columns come from the first row, which had no update (an update's is left out).
        XCTAssertEqual(
            try sqlite3("SELECT key, start, n FROM counts ORDER BY start, key"), "a|0|2\na|60000|1\nb|60000|1\n")
    }

    func testRowsAreWrittenWithInferredTypesAndASecondRunAppends() throws {
        let orders = [
            "{ id: 1, customer: ada, total: 9.5, paid: true, items: [a, b], note: null }",
            "{ id: 2, customer: bob, total: 3, paid: false, items: [], note: rush, extra: ignored }",
        ]
        let first = try writeOrders(orders)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(
            try sqlite3("SELECT sql FROM sqlite_master WHERE name = 'orders'"),
            "CREATE TABLE \"orders\" (\"id\" INTEGER, \"customer\" TEXT, \"total\" REAL, \"paid\" INTEGER, \"items\" TEXT, \"note\")\n"
        )
        XCTAssertEqual(
            try sqlite3("SELECT id, customer, total, paid, items, typeof(note), note FROM orders ORDER BY id"),
            "1|ada|9.5|1|[\"a\",\"b\"]|null|\n2|bob|3.0|0|[]|text|rush\n")
        let second = try writeOrders(orders)
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM orders"), "4\n", "without a key a second run appends")
    }

    func testAKeyUpsertsInPlace() throws {
        let result = try writeOrders(
            ["{ id: 1, status: new }", "{ id: 2, status: new }", "{ id: 1, status: paid }"], options: ", key: [id]")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try sqlite3("SELECT id, status FROM orders ORDER BY id"), "1|paid\n2|new\n")
        let again = try writeOrders(["{ id: 2, status: shipped }"], options: ", key: [id]")
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try sqlite3("SELECT id, status FROM orders ORDER BY id"), "1|paid\n2|shipped\n")
    }

    func testARefusedRowFailsOrGoesToTheErrorsStream() throws {
        _ = try sqlite3("CREATE TABLE orders (id INTEGER NOT NULL, total REAL CHECK (total >= 0))")
        let failed = try writeOrders(["{ id: 1, total: 5 }", "{ id: 2, total: -1 }", "{ id: 3, total: 1 }"])
        XCTAssertEqual(failed.status, 1)
        assertContains(failed.stderr, "error: sqlite: orders: CHECK constraint failed")
        XCTAssertEqual(try sqlite3("SELECT id FROM orders"), "1\n", "what was accepted before the failure is kept")
        _ = try sqlite3("DELETE FROM orders")
        let routed = try run(
            """
            streams:
              orders:
                source: { events: [{ at: 0ms, next: { id: 1, total: 5 } }, { at: 1ms, next: { id: 2, total: -1 } }, { at: 2ms, next: 7 }, { at: 3ms, complete: true }] }
            sinks:
              - { stream: orders, id: db, sqlite: { path: orders.db, table: orders, onError: errors } }
              - { stream: db.errors, stdout: { template: "{{ .element }} {{ .error }}" } }
            """, ["--clock", "virtual"])
        XCTAssertEqual(routed.status, 0, routed.stderr)
        XCTAssertEqual(
            routed.stdout,
            "{\"id\":2,\"total\":-1} orders: CHECK constraint failed: total >= 0\n7 sqlite writes objects, one a row; got number\n"
        )
        XCTAssertEqual(try sqlite3("SELECT id FROM orders"), "1\n")
    }

    func testALockedDatabaseIsWaitedForThenFailsClearly() throws {
        _ = try sqlite3("CREATE TABLE orders (id INTEGER)")
        // Another program holds a write lock for the whole run.
        let holder = try holdLock("c.execute('BEGIN EXCLUSIVE')")
        defer { holder.terminate() }
        let result = try writeOrders(["{ id: 1 }"], options: ", busyTimeout: 300ms")
        XCTAssertEqual(result.status, 1)
        assertContains(
            result.stderr, "orders.db is locked by another program and stayed locked for 300ms (busyTimeout)")
    }

    func testASignalIsHonouredWhileASinkWaitsForALockedDatabase() throws {
        // The sink's commit waited out busyTimeout (60 s here) with the signal pending.
        _ = try sqlite3("CREATE TABLE orders (id INTEGER)")
        let holder = try holdLock("c.execute('BEGIN EXCLUSIVE')", seconds: 60)
        defer { holder.terminate() }
        let file = directory.appendingPathComponent("locked.yaml")
        try """
        source: { stdin: { format: jsonl } }
        sink: { sqlite: { path: orders.db, table: orders, busyTimeout: 60s } }
        """.write(to: file, atomically: true, encoding: .utf8)
        let runner = try startRivulet(["run", file.path, "--drain-timeout", "1s"], input: .pipe, output: .null)
        let line = Array("{\"id\":1}\n".utf8)
        _ = line.withUnsafeBytes { write(runner.standardInput, $0.baseAddress, $0.count) }
        Thread.sleep(forTimeInterval: 1)
        let signalled = Date()
        runner.send(SIGINT)
        let output = runner.communicate(timeout: 30)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertEqual(output.termination.status, 130, stderr)
        XCTAssertLessThan(Date().timeIntervalSince(signalled), 10, "the drain timeout (1 s) and 5 s more: \(stderr)")
        assertContains(stderr, "still stopping 6s after the signal")
    }

    func testACommitThatFailsBetweenElementsFailsTheRunAtOnce() throws {
        _ = try sqlite3("CREATE TABLE orders (id INTEGER)")
        // A reader holds its transaction open, so the timed commit cannot take its lock.
        let reader = try holdLock("c.execute('BEGIN'); c.execute('SELECT * FROM orders').fetchall()")
        defer { reader.terminate() }
        let result = try run(
            """
            streams:
              orders:
                source: { events: [{ at: 0ms, next: { id: 1 } }, { at: 3s, next: { id: 2 } }, { at: 3s, complete: true }] }
            sinks:
              - { stream: orders, stdout: {} }
              - { stream: orders, sqlite: { path: orders.db, table: orders, batch: { period: 50ms }, busyTimeout: 200ms } }
            """)
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "orders.db is locked by another program")
        XCTAssertEqual(result.stdout, "{\"id\":1}\n", "the run failed when the commit did, not at the next element")
    }

    func testTheSourceReadsOnceOrPollsForNewRows() throws {
        _ = try sqlite3(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL, note TEXT); INSERT INTO orders VALUES (1, 'ada', 9.5, NULL), (2, 'bob', 3, 'rush')"
        )
        let once = try run(
            """
            source: { sqlite: { path: orders.db, query: "SELECT * FROM orders ORDER BY id" } }
            sink: stdout
            """)
        XCTAssertEqual(once.status, 0, once.stderr)
        XCTAssertEqual(
            once.stdout,
            "{\"id\":1,\"customer\":\"ada\",\"total\":9.5,\"note\":null}\n{\"id\":2,\"customer\":\"bob\",\"total\":3.0,\"note\":\"rush\"}\n"
        )
        // Polled on the real clock while another program adds rows: each row once, in order.
        let adder = Process()
        adder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        adder.arguments = [
            "python3", "-c",
            "import sqlite3,time,sys\nfor n in range(3, 6):\n    time.sleep(0.15)\n    c=sqlite3.connect(sys.argv[1]); c.execute('INSERT INTO orders (id, customer) VALUES (?, ?)', (n, 'new')); c.commit(); c.close()",
            database,
        ]
        try adder.run()
        let polled = try run(
            """
            source: { sqlite: { path: orders.db, query: "SELECT id, customer FROM orders", every: 50ms, since: id } }
            ops:
              - take: 5
              - map: .id
            sink: stdout
            """)
        adder.waitUntilExit()
        XCTAssertEqual(polled.status, 0, polled.stderr)
        XCTAssertEqual(polled.stdout, "1\n2\n3\n4\n5\n")
    }

    func testTheSourceOnlyReadsAndASinceColumnTheRowsLackIsAnError() throws {
        _ = try sqlite3(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT); INSERT INTO orders VALUES (1, 'ada')")
        // Opened read-only: `query: DELETE FROM orders` deleted every row, exit 0.
        let deleting = try run("source: { sqlite: { path: orders.db, query: \"DELETE FROM orders\" } }\nsink: stdout\n")
        XCTAssertEqual(deleting.status, 1, deleting.stderr)
        assertContains(deleting.stderr, "readonly")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM orders"), "1\n")
        // A since column the rows lack: every row was emitted again at every poll.
        let missing = try run(
            """
            source: { sqlite: { path: orders.db, query: "SELECT customer FROM orders", every: 50ms, since: id } }
            sink: stdout
            """)
        XCTAssertEqual(missing.status, 1, missing.stderr)
        assertContains(missing.stderr, "the query's rows have no column 'id' (since); they have 'customer'")
        XCTAssertEqual(missing.stdout, "")
    }

    func testRowsAreStreamedSoTakeEndsAnEndlessQueryAndASignalStopsALongOne() throws {
        _ = try sqlite3("CREATE TABLE t (x INTEGER)")
        let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
        // Every row was read before the first was emitted: nothing came, memory grew 35 MB/s.
        let taken = try run(
            "source: { sqlite: { path: orders.db, query: \"\(endless)\" } }\nops:\n  - take: 3\nsink: stdout\n")
        XCTAssertEqual(taken.status, 0, taken.stderr)
        XCTAssertEqual(taken.stdout, "{\"x\":1}\n{\"x\":2}\n{\"x\":3}\n")
        // Endless rows, and an endless sort before the first row: SIGTERM ends either at once.
        for query in [endless, endless + " ORDER BY x DESC"] {
            let file = directory.appendingPathComponent("q-\(UUID().uuidString).yaml")
            try "source: { sqlite: { path: orders.db, query: \"\(query)\" } }\nsink: { file: rows.jsonl }\n"
                .write(to: file, atomically: true, encoding: .utf8)
            let runner = try startRivulet(["run", file.path], output: .null, error: .pipe)
            Thread.sleep(forTimeInterval: 1)
            let signalled = Date()
            runner.send(SIGTERM)
            let output = runner.communicate(timeout: 20)
            XCTAssertEqual(output.termination.status, 143, String(decoding: output.standardError, as: UTF8.self))
            XCTAssertLessThan(Date().timeIntervalSince(signalled), 2, "acted on at once: \(query)")
        }
    }

    func testBlobsAndTextWithANulAreKept() throws {
        // A BLOB was read as "", text was cut at a NUL, and the sink stored such a string as "".
        _ = try sqlite3("CREATE TABLE t (b BLOB, s TEXT); INSERT INTO t VALUES (x'00ff10', 'a' || char(0) || 'b')")
        let read = try run("source: { sqlite: { path: orders.db, query: \"SELECT b, s FROM t\" } }\nsink: stdout\n")
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout, "{\"b\":\"AP8Q\",\"s\":\"a\\u0000b\"}\n", "the BLOB as base64, the text whole")
        let written = try run(
            """
            source: { events: [{ at: 0ms, next: { s: "a\\0b" } }, { at: 0ms, complete: true }] }
            sink: { sqlite: { path: orders.db, table: u } }
            """, ["--clock", "virtual"])
        XCTAssertEqual(written.status, 0, written.stderr)
        XCTAssertEqual(try sqlite3("SELECT length(CAST(s AS BLOB)), hex(s) FROM u"), "3|610062\n")
    }

    func testLintChecksTheDatabaseAndTheKey() throws {
        let file = directory.appendingPathComponent("bad.yaml")
        try """
        source: { sqlite: { path: missing.db, query: "SELECT 1" } }
        sink: { sqlite: { path: nowhere/out.db, table: t, columns: [a], key: [b] } }
        """.write(to: file, atomically: true, encoding: .utf8)
        let result = try runRivulet(["lint", file.path])
        XCTAssertEqual(result.status, 2)
        assertContains(
            result.stderr, "bad.yaml:1:27: error: sqlite: cannot read the database 'missing.db'",
            "error: sqlite: the folder 'nowhere' of 'nowhere/out.db' does not exist",
            "error: sqlite: key column 'b' is not among the columns")
    }
}
