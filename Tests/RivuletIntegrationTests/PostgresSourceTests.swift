import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import Synchronization
import XCTest

/// The `postgres` source against a real server of the test's own: changes through a replication
/// slot, a query's rows, and what a runner killed with SIGKILL leaves.
final class PostgresSourceTests: PostgresBinaryTestCase {
    private func pipeline(_ text: String) throws -> String {
        let path = directory.appendingPathComponent("p-\(UUID().uuidString.prefix(6)).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Lines of `path` once it has at least `count` of them (or after 20 s).
    private func lines(of path: String, atLeast count: Int) -> [String] {
        let deadline = Date(timeIntervalSinceNow: 20)
        var lines: [String] = []
        repeat {
            lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count >= count { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return lines
    }

    func testEachChangeIsAnElementWithItsRowsTypedAndTheSlotMovesOnceWritten() throws {
        try server.psql(
            "CREATE TABLE orders (id int PRIMARY KEY, who text, price numeric(8,2), at timestamptz, meta jsonb, ok boolean)"
        )
        let output = directory.appendingPathComponent("changes.jsonl").path
        let runner = try startRivulet(
            [
                "run",
                try pipeline(
                    """
                    source: { postgres: { url: "\(server.url)", slot: orders_slot, publication: orders_pub, create: true, tables: [orders] } }
                    ops: [ { map: { op: .op, table: .table, before: .before, after: .after } } ]
                    sink: { file: \(output) }
                    """),
            ])
        defer { runner.send(SIGKILL) }
        // The slot exists once the source started.
        let deadline = Date(timeIntervalSinceNow: 20)
        while try server.psql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'orders_slot'") != "1",
            Date() < deadline
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        try server.psql(
            """
            INSERT INTO orders VALUES (1, 'ann', 2.50, '2026-12-03 05:00:00+00', '{"vip": true}', true), (2, 'bo', 3, NULL, NULL, false);
            UPDATE orders SET price = 9 WHERE id = 1;
            DELETE FROM orders WHERE id = 2;
            """)
        XCTAssertEqual(
            lines(of: output, atLeast: 4),
            [
                #"{"op":"insert","table":"orders","before":null,"after":{"id":1,"who":"ann","price":"2.50","at":1796274000000,"meta":{"vip":true},"ok":true}}"#,
                #"{"op":"insert","table":"orders","before":null,"after":{"id":2,"who":"bo","price":"3.00","at":null,"meta":null,"ok":false}}"#,
                #"{"op":"update","table":"orders","before":null,"after":{"id":1,"who":"ann","price":"9.00","at":1796274000000,"meta":{"vip":true},"ok":true}}"#,
                #"{"op":"delete","table":"orders","before":{"id":2},"after":null}"#,
            ])
        // Written: the slot is confirmed up to the server's end of log.
        XCTAssertTrue(waitUntilCaughtUp(slot: "orders_slot", seconds: 20))
        runner.send(SIGTERM)
        XCTAssertEqual(runner.wait(), .exited(143))
    }

    func testAMissingSlotOrAnUnpublishedTableIsAClearErrorNamingTheComponent() throws {
        try server.psql("CREATE TABLE orders (id int PRIMARY KEY); CREATE TABLE other (id int PRIMARY KEY)")
        try server.psql("CREATE PUBLICATION orders_pub FOR TABLE orders")
        let missingSlot = try run(
            """
            source: { postgres: { url: "\(server.url)", slot: nowhere, publication: orders_pub } }
            sink: { stdout: {} }
            """)
        XCTAssertEqual(missingSlot.status, 1)
        assertContains(
            missingSlot.stderr,
            "error: postgres: the replication slot 'nowhere' does not exist (give create: true to make it)")
        let unpublished = try run(
            """
            source: { postgres: { url: "\(server.url)", slot: s, publication: orders_pub, create: true, tables: [orders, other] } }
            sink: { stdout: {} }
            """)
        XCTAssertEqual(unpublished.status, 1)
        assertContains(
            unpublished.stderr,
            "error: postgres: the publication 'orders_pub' does not publish public.other (ALTER PUBLICATION orders_pub ADD TABLE other)"
        )
        let lint = try runRivulet([
            "lint",
            try pipeline(
                """
                source: { postgres: { url: "\(server.url)", slot: s, query: "SELECT 1" } }
                sink: { stdout: {} }
                """),
        ])
        XCTAssertEqual(lint.status, 2)
        assertContains(lint.stderr, "give either slot and publication (changes) or query (rows), not both")
        let line = #"source: { postgres: { url: "\#(server.url)", slot: s, publication: p, snapshot: true } }"#
        let snapshot = try runRivulet(["lint", try pipeline(line + "\nsink: { stdout: {} }\n")])
        XCTAssertEqual(snapshot.status, 2)
        // Pointing at the snapshot parameter's value.
        let column = line.distance(from: line.startIndex, to: line.range(of: "snapshot: ")!.upperBound) + 1
        assertContains(
            snapshot.stderr,
            ":1:\(column): error: postgres: snapshot needs create: true: the snapshot is taken as the slot is made")
    }

    func testAQueryIsReadOnceOrPolledForNewRowsBySince() throws {
        try server.psql(
            "CREATE TABLE events (id bigint PRIMARY KEY, at timestamptz, note text); INSERT INTO events SELECT n, '2026-12-03 00:00:00+00'::timestamptz + n * interval '1 minute', 'e' || n FROM generate_series(1, 5) AS n"
        )
        let once = try run(
            """
            source: { postgres: { url: "\(server.url)", query: "SELECT id, note FROM events WHERE id > 3 ORDER BY id;" } }
            sink: { stdout: {} }
            """)
        XCTAssertEqual(once.status, 0, once.stderr)
        XCTAssertEqual(once.stdout, "{\"id\":4,\"note\":\"e4\"}\n{\"id\":5,\"note\":\"e5\"}\n")
        let output = directory.appendingPathComponent("polled.jsonl").path
        let runner = try startRivulet([
            "run",
            try pipeline(
                """
                source: { postgres: { url: "\(server.url)", query: "SELECT at, note FROM events", every: 100ms, since: at } }
                sink: { file: \(output) }
                """),
        ])
        defer { runner.send(SIGKILL) }
        XCTAssertEqual(lines(of: output, atLeast: 5).count, 5)
        try server.psql("INSERT INTO events VALUES (6, '2026-12-03 01:00:00+00', 'late'), (7, NULL, 'no time')")
        let all = lines(of: output, atLeast: 6)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(lines(of: output, atLeast: 6), all)
        XCTAssertEqual(all.last, #"{"at":1796259600000,"note":"late"}"#)
        XCTAssertEqual(all.count, 6)
    }

    /// `Pipelines/orders-cdc.yaml` as written, against the real server: orders inserted while it
    /// runs are summed per customer per minute into customer_totals.
    func testTheOrdersCDCPipelineSumsEachCustomersOrdersIntoTheServer() throws {
        try server.psql(
            "CREATE TABLE orders (id bigserial PRIMARY KEY, customer text NOT NULL, qty int NOT NULL, price numeric(10,2) NOT NULL)"
        )
        let file = Repository.root.appendingPathComponent("Pipelines/orders-cdc.yaml").path
        let runner = try startRivulet(["run", file], environment: ["DATABASE_URL": server.url])
        let deadline = Date(timeIntervalSinceNow: 20)
        while try server.psql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'rivulet_orders'") != "1",
            Date() < deadline
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        for batch in 0..<10 {
            try server.psql(
                "INSERT INTO orders (customer, qty, price) SELECT 'c' || (n % 7), n % 5 + 1, (n % 13) + 0.25 FROM generate_series(\(batch * 100), \(batch * 100 + 99)) AS n"
            )
            try server.psql("UPDATE orders SET qty = qty + 1 WHERE id = \(batch + 1)")
        }
        Thread.sleep(forTimeInterval: 2)
        runner.send(SIGTERM)
        let end = runner.communicate(timeout: 30)
        XCTAssertEqual(end.termination, .exited(143), String(decoding: end.standardError, as: UTF8.self))
        // Inserted values, before the updates (the pipeline sums new orders as they came).
        let expected = try server.psql(
            "SELECT customer, count(*), sum(((n % 5) + 1) * ((n % 13) + 0.25))::numeric(12, 2) FROM (SELECT n, 'c' || (n % 7) AS customer FROM generate_series(0, 999) AS n) AS o GROUP BY customer ORDER BY customer"
        )
        XCTAssertEqual(
            try server.psql(
                "SELECT customer, sum(orders), sum(total)::numeric(12, 2) FROM customer_totals GROUP BY customer ORDER BY customer"
            ), expected)
        // The SQL docs/postgres.md shows, as written: the role's grant, and dropping the slot.
        let page = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/postgres.md"), encoding: .utf8)
        let statements = page.components(separatedBy: "```sql\n").dropFirst().map {
            $0.components(separatedBy: "```")[0].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(
            statements,
            ["ALTER ROLE rivulet WITH REPLICATION;", "SELECT pg_drop_replication_slot('rivulet_orders');"])
        try server.psql("CREATE ROLE rivulet")
        for statement in statements { try server.psql(statement) }
        XCTAssertEqual(try server.psql("SELECT rolreplication FROM pg_roles WHERE rolname = 'rivulet'"), "t")
        XCTAssertEqual(try server.psql("SELECT count(*) FROM pg_replication_slots"), "0")
    }

    /// The table `src` (each change also counted in `src_audit`, which is not published), its
    /// publication and slot, and 20,000 inserts, updates and deletes as scripts of 1,000
    /// statements, each statement its own transaction.
    private func prepareCopy(extraSink: String = "") throws -> (scripts: [String], pipeline: String) {
        try server.psql(
            """
            CREATE TABLE src (id int PRIMARY KEY, v int); CREATE TABLE src_audit (n bigserial);
            CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO src_audit DEFAULT VALUES; RETURN NULL; END $$;
            CREATE TRIGGER audited AFTER INSERT OR UPDATE OR DELETE ON src FOR EACH ROW EXECUTE FUNCTION audit();
            CREATE PUBLICATION copy_pub FOR TABLE src;
            """)
        try server.psql("SELECT pg_create_logical_replication_slot('copy_slot', 'pgoutput')")
        var statements: [String] = []
        var live: [Int] = []
        var next = 0
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let roll = Int.random(in: 0..<10, using: &generator)
            if live.count < 50 || roll < 5 {
                statements.append("INSERT INTO src VALUES (\(next), \(next));")
                live.append(next)
                next += 1
            } else if roll < 8 {
                statements.append("UPDATE src SET v = v + 1 WHERE id = \(live.randomElement(using: &generator)!);")
            } else {
                let index = Int.random(in: 0..<live.count, using: &generator)
                statements.append("DELETE FROM src WHERE id = \(live.remove(at: index));")
            }
        }
        var scripts: [String] = []
        for (number, first) in stride(from: 0, to: statements.count, by: 1000).enumerated() {
            let script = directory.appendingPathComponent("writes-\(number).sql").path
            try statements[first..<first + 1000].joined(separator: "\n").write(
                toFile: script, atomically: true, encoding: .utf8)
            scripts.append(script)
        }
        let path = try pipeline(
            """
            source: { postgres: { url: "\(server.url)", slot: copy_slot, publication: copy_pub } }
            sinks:
              - postgres:
                  url: "\(server.url)"
                  table: dst
                  columns: { id: .after.id ?? .before.id, v: .after.v }
                  key: [id]
                  delete: .op == "delete"
                  batch: { count: 200, period: 50ms }
              - postgres:
                  url: "\(server.url)"
                  table: change_log
                  columns: { lsn: .lsn, op: .op }
                  id: change_id
                  batch: { count: 300, period: 70ms }
            \(extraSink)
            """)
        return (scripts, path)
    }

    /// Runs the scripts one after another on a thread of their own, a pause of 0.15 s between
    /// two; a script cut by a server restart is left, and the next one waits for the server.
    private func startWriting(_ scripts: [String]) -> Writing {
        let server = self.server!
        let writing = Writing()
        let writer = Thread {
            for script in scripts {
                if (try? server.psql("\\i \(script)")) == nil { Thread.sleep(forTimeInterval: 0.5) }
                Thread.sleep(forTimeInterval: 0.15)
            }
            writing.going.withLock { $0 = false }
        }
        writer.start()
        return writing
    }

    /// Whether the writer still writes.
    private final class Writing: Sendable {
        let going = Mutex(true)
        var isGoing: Bool { going.withLock { $0 } }
    }

    /// Starts a runner that goes on until the slot has caught up with the server's log, then stops
    /// it in order, and checks the copy: `dst` equals `src`, and the log of changes holds every
    /// change once.
    private func runToTheEndAndCompare(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let last = try startRivulet(["run", path], output: .null, error: .pipe)
        let caughtUp = waitUntilCaughtUp(slot: "copy_slot")
        last.send(SIGTERM)
        let end = last.communicate(timeout: 30)
        XCTAssertEqual(end.termination, .exited(143), String(decoding: end.standardError, as: UTF8.self))
        XCTAssertTrue(caughtUp, file: file, line: line)
        XCTAssertEqual(
            try server.psql(
                "SELECT count(*) FROM (SELECT * FROM src EXCEPT SELECT * FROM dst UNION ALL SELECT * FROM dst EXCEPT SELECT * FROM src) AS differences"
            ), "0", file: file, line: line)
        let changes = try server.psql("SELECT count(*) FROM src_audit")
        print("postgres: \(changes) changes, \(try server.psql("SELECT count(*) FROM src")) rows copied")
        XCTAssertEqual(
            try server.psql("SELECT count(*), count(DISTINCT change_id), count(DISTINCT lsn) FROM change_log"),
            "\(changes)|\(changes)|\(changes)", file: file, line: line)
    }

    /// 20,000 inserts, updates and deletes by a concurrent writer while CDC writes into a second
    /// table, the runner killed with SIGKILL again and again: the copy equals the table row for
    /// row, and the log of changes holds each change once (its derived id is unique).
    func testKilledAgainAndAgainTheCopyEqualsTheTableAndNoChangeIsWrittenTwice() throws {
        let (scripts, path) = try prepareCopy()
        let writing = startWriting(scripts)
        // Runners killed with SIGKILL after 0.1 to 0.8 s each while the writer goes on (the
        // source never ends by itself).
        var killed = 0
        while writing.isGoing || killed < 3 {
            let runner = try startRivulet(["run", path], output: .null, error: .null)
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...0.8))
            runner.send(SIGKILL)
            XCTAssertEqual(runner.wait(), .signalled(SIGKILL))
            killed += 1
        }
        print("postgres: \(killed) runners killed with SIGKILL, then one to the end")
        try runToTheEndAndCompare(path)
    }

    /// Waits until `sql` answers `expected` (or 30 s); whether it did.
    private func waitUntil(_ sql: String, is expected: String) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 30)
        repeat {
            if (try? server.psql(sql)) == expected { return true }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return false
    }

    /// `snapshot: true`: a slot the run makes starts with the rows the tables hold (op read),
    /// then every change after them; the slot is made for good once those rows are written, and
    /// the next run reads only the changes after the last one written.
    func testASnapshotStartsANewSlotWithTheTablesRowsThenTheChangesAfterThem() throws {
        try server.psql(
            """
            CREATE TABLE items (id int PRIMARY KEY, name text);
            INSERT INTO items SELECT i, 'n' || i FROM generate_series(1, 2000) AS i;
            """)
        func runner(writingTo output: String) throws -> ChildProcess {
            try startRivulet(
                [
                    "run",
                    try pipeline(
                        """
                        source: { postgres: { url: "\(server.url)", slot: snap_slot, publication: snap_pub, create: true, snapshot: true, tables: [items] } }
                        ops: [ { map: { op: .op, id: .after.id ?? .before.id } } ]
                        sink: { file: \(output) }
                        """),
                ], output: .null, error: .pipe)
        }
        let first = directory.appendingPathComponent("first.jsonl").path
        let running = try runner(writingTo: first)
        defer { running.send(SIGKILL) }
        XCTAssertTrue(
            waitUntil("SELECT string_agg(temporary::text, ',') FROM pg_replication_slots", is: "false"),
            "the slot is made for good and the temporary one is gone")
        try server.psql(
            "INSERT INTO items VALUES (2001, 'late'); UPDATE items SET name = 'x' WHERE id = 1; DELETE FROM items WHERE id = 2"
        )
        let lines = self.lines(of: first, atLeast: 2003)
        XCTAssertEqual(lines.count, 2003)
        XCTAssertTrue(
            Set(lines.prefix(2000)) == Set((1...2000).map { #"{"op":"read","id":\#($0)}"# }), "the rows, each once")
        XCTAssertEqual(
            Array(lines.suffix(3)),
            [#"{"op":"insert","id":2001}"#, #"{"op":"update","id":1}"#, #"{"op":"delete","id":2}"#])
        XCTAssertTrue(waitUntilCaughtUp(slot: "snap_slot", seconds: 20))
        running.send(SIGTERM)
        XCTAssertEqual(running.communicate(timeout: 30).termination, .exited(143))

        // The next run takes no snapshot: the slot is there, and it reads what came after.
        let second = directory.appendingPathComponent("second.jsonl").path
        let again = try runner(writingTo: second)
        defer { again.send(SIGKILL) }
        try server.psql("INSERT INTO items VALUES (2002, 'later')")
        XCTAssertEqual(self.lines(of: second, atLeast: 1), [#"{"op":"insert","id":2002}"#])
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(self.lines(of: second, atLeast: 1).count, 1)
    }

    /// A run killed during the snapshot leaves no slot (the temporary one goes with its
    /// connection): the next run takes the snapshot again whole, and a copy keyed by id equals
    /// the table, the changes made meanwhile included.
    func testASnapshotCutByAKillIsTakenAgainWhole() throws {
        try server.psql(
            """
            CREATE TABLE big (id int PRIMARY KEY, v int);
            INSERT INTO big SELECT i, i FROM generate_series(1, 100000) AS i;
            """)
        let path = try pipeline(
            """
            source: { postgres: { url: "\(server.url)", slot: big_slot, publication: big_pub, create: true, snapshot: true, tables: [big] } }
            sink:
              postgres:
                url: "\(server.url)"
                table: big_copy
                columns: { id: .after.id ?? .before.id, v: .after.v }
                key: [id]
                delete: .op == "delete"
            """)
        let killed = try startRivulet(["run", path], output: .null, error: .null)
        XCTAssertTrue(waitUntil("SELECT count(*) > 0 FROM big_copy", is: "t"), "the snapshot's first rows are written")
        XCTAssertEqual(try server.psql("SELECT count(*) FROM pg_replication_slots WHERE NOT temporary"), "0")
        killed.send(SIGKILL)
        XCTAssertEqual(killed.wait(), .signalled(SIGKILL))
        XCTAssertTrue(waitUntil("SELECT count(*) FROM pg_replication_slots", is: "0"), "the temporary slot went")
        // Updated between the two snapshots: the second one reads the rows as they are now. (A
        // row deleted meanwhile would stay in the copy: no change says it went.)
        try server.psql("UPDATE big SET v = -v WHERE id % 1000 = 0")
        let last = try startRivulet(["run", path], output: .null, error: .pipe)
        XCTAssertTrue(waitUntil("SELECT count(*) FROM pg_replication_slots WHERE NOT temporary", is: "1"))
        try server.psql("INSERT INTO big VALUES (100001, 1); DELETE FROM big WHERE id % 999 = 0")
        XCTAssertTrue(waitUntilCaughtUp(slot: "big_slot", seconds: 30))
        last.send(SIGTERM)
        let end = last.communicate(timeout: 30)
        XCTAssertEqual(end.termination, .exited(143), String(decoding: end.standardError, as: UTF8.self))
        XCTAssertEqual(
            try server.psql(
                "SELECT count(*) FROM (SELECT * FROM big EXCEPT SELECT * FROM big_copy UNION ALL SELECT * FROM big_copy EXCEPT SELECT * FROM big) AS differences"
            ), "0")
    }

    /// Two slots see the same changes at the same log positions: a run watched with --metrics
    /// writes the same bytes as one that is not. And while a stage holds changes (a `buffer`),
    /// the slot keeps the server's log: `postgres_slot_lag_bytes` shows how much.
    func testAWatchedRunWritesTheSameBytesAndShowsTheSlotsLag() throws {
        try server.psql(
            """
            CREATE TABLE t (id int PRIMARY KEY, name text, at timestamptz DEFAULT now());
            CREATE PUBLICATION t_pub FOR TABLE t;
            """)
        // A slot cannot be made in a transaction that wrote.
        try server.psql("SELECT pg_create_logical_replication_slot('plain', 'pgoutput')")
        try server.psql("SELECT pg_create_logical_replication_slot('watched', 'pgoutput')")
        for first in stride(from: 0, to: 300, by: 10) {
            try server.psql(
                "INSERT INTO t (id, name) SELECT i, 'n' || i FROM generate_series(\(first), \(first + 9)) AS i; "
                    + "UPDATE t SET name = upper(name) WHERE id = \(first); DELETE FROM t WHERE id = \(first + 1)")
        }
        func run(slot: String, arguments: [String]) throws -> Data {
            let output = directory.appendingPathComponent("\(slot).jsonl").path
            let path = try pipeline(
                """
                source: { postgres: { url: "\(server.url)", slot: \(slot), publication: t_pub } }
                ops: [ { take: 360 } ]
                sink: { file: \(output) }
                """)
            let runner = try startRivulet(["run", path] + arguments, output: .null, error: .pipe)
            let end = runner.communicate(timeout: 60)
            XCTAssertEqual(end.termination, .exited(0), String(decoding: end.standardError, as: UTF8.self))
            return try Data(contentsOf: URL(fileURLWithPath: output))
        }
        let plain = try run(slot: "plain", arguments: [])
        let watched = try run(
            slot: "watched", arguments: ["--metrics", "127.0.0.1:\(freeLoopbackPort())"])
        XCTAssertEqual(plain.split(separator: UInt8(ascii: "\n")).count, 360)
        XCTAssertEqual(plain, watched)

        let (runner, port) = try startWatched(
            """
            source: { postgres: { url: "\(server.url)", slot: watched, publication: t_pub } }
            ops: [ { buffer: { timeSpan: 1h, count: 100000 } } ]
            sink: { file: \(directory.appendingPathComponent("held.jsonl").path) }
            """)
        defer { runner.send(SIGKILL) }
        try server.psql("INSERT INTO t (id, name) SELECT i, 'late' FROM generate_series(1000, 1099) AS i")
        var lag: Double?
        let deadline = Date(timeIntervalSinceNow: 20)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            let metrics = LoopbackHTTP.get(port, "/metrics")?.body ?? ""
            lag = LoopbackHTTP.sample(metrics, "rivulet_postgres_slot_lag_bytes", [#"place="source""#])
        } while (lag ?? 0) <= 0 && Date() < deadline
        XCTAssertGreaterThan(lag ?? 0, 0)
        let serverLag = try server.psql(
            "SELECT pg_current_wal_lsn() - confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'watched'")
        XCTAssertGreaterThan(Int(serverLag) ?? 0, 0, "the server too sees the slot behind")
    }

    /// Under --state, changes counted by a `scan` into a file and a table, the runner killed with
    /// SIGKILL again and again while the writer goes on: the file holds each change once, counted
    /// once (its count is its line number), the table the same rows, and the slot catches up: a change the resumed checkpoint
    /// holds is passed over when the server sends it again, one it does not hold is read again.
    func testUnderStateKilledAgainAndAgainEachChangeIsCountedOnce() throws {
        let (scripts, _) = try prepareCopy()
        let output = directory.appendingPathComponent("counted.jsonl").path
        let state = directory.appendingPathComponent("state.sqlite").path
        let path = try pipeline(
            """
            source: { postgres: { url: "\(server.url)", slot: copy_slot, publication: copy_pub } }
            ops:
              - scan: { seed: { n: 0 }, accumulator: { n: acc.n + 1, lsn: .lsn } }
            sinks:
              - file: \(output)
              - postgres:
                  url: "\(server.url)"
                  table: counted
                  key: [lsn]
                  batch: { count: 300, period: 70ms }
            """)
        let writing = startWriting(scripts)
        var killed = 0
        while writing.isGoing || killed < 3 {
            let runner = try startRivulet(
                ["run", path, "--state", state, "--checkpoint-interval", "100ms"], output: .null, error: .pipe)
            Thread.sleep(forTimeInterval: Double.random(in: 0.2...0.9))
            runner.send(SIGKILL)
            let ended = runner.communicate(timeout: 30)
            XCTAssertEqual(ended.termination, .signalled(SIGKILL), String(decoding: ended.standardError, as: UTF8.self))
            killed += 1
        }
        print("postgres --state: \(killed) runners killed with SIGKILL, then one to the end")
        let last = try startRivulet(
            ["run", path, "--state", state, "--checkpoint-interval", "100ms"], output: .null, error: .pipe)
        let caughtUp = waitUntilCaughtUp(slot: "copy_slot")
        last.send(SIGTERM)
        let end = last.communicate(timeout: 30)
        XCTAssertEqual(end.termination, .exited(143), String(decoding: end.standardError, as: UTF8.self))
        XCTAssertTrue(caughtUp)
        let changes = Int(try server.psql("SELECT count(*) FROM src_audit"))!
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, changes)
        var positions = Set<Substring>()  // each change's own lsn
        for (index, line) in lines.enumerated() {
            guard line.hasPrefix("{\"n\":\(index + 1),\"lsn\":") else {
                XCTFail("line \(index + 1) counts wrong: \(line)")
                break
            }
            positions.insert(line.split(separator: "\"lsn\":")[1])
        }
        XCTAssertEqual(positions.count, changes)
        // The table too holds each change once, with the count the file gives it.
        XCTAssertEqual(
            try server.psql("SELECT count(*), count(DISTINCT n), min(n), max(n) FROM counted"),
            "\(changes)|\(changes)|1|\(changes)")
    }

    /// The same with one runner and the server crashing (`pg_ctl stop -m immediate`) and starting
    /// again mid-stream: the source and both sinks connect again and the copy is exact.
    func testTheServerRestartedMidStreamTheCopyEqualsTheTableAndNoChangeIsWrittenTwice() throws {
        // Every change this runner emits, to show it emits none twice across the reconnection.
        let emitted = directory.appendingPathComponent("emitted.jsonl").path
        let (scripts, path) = try prepareCopy(extraSink: "  - file: \(emitted)")
        let runner = try startRivulet(["run", path], output: .null, error: .pipe)
        let writing = startWriting(scripts)
        Thread.sleep(forTimeInterval: 1.5)
        server.stop(mode: "immediate", deleting: false)
        Thread.sleep(forTimeInterval: 1)
        try server.start()
        while writing.isGoing { Thread.sleep(forTimeInterval: 0.1) }
        // The runner that lived through the restart catches up and stops in order.
        XCTAssertTrue(waitUntilCaughtUp(slot: "copy_slot"))
        runner.send(SIGTERM)
        let end = runner.communicate(timeout: 30)
        XCTAssertEqual(end.termination, .exited(143), String(decoding: end.standardError, as: UTF8.self))
        let lines = try String(contentsOfFile: emitted, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(String(lines.count), try server.psql("SELECT count(*) FROM src_audit"))
        XCTAssertEqual(Set(lines).count, lines.count)
        try runToTheEndAndCompare(path)
    }
}
