import Postgres
import RivuletTestSupport
import XCTest

/// Against a real PostgreSQL server, started for the class and stopped after it.
final class PostgresConnectionTests: XCTestCase {
    nonisolated(unsafe) private static var server: PostgresTestServer?

    override class func setUp() {
        server = try? PostgresTestServer()
    }

    override class func tearDown() {
        server?.stop()
        server = nil
    }

    private func server() throws -> PostgresTestServer {
        guard let server = Self.server else {
            throw XCTSkip("PostgreSQL did not start (scripts/install-deps.sh installs it)")
        }
        return server
    }

    func testParametersAreBoundNeverSplicedIntoTheStatement() throws {
        let connection = try PostgresConnection(settings: try server().url)
        let sneaky = "x'); DROP TABLE pg_class; --"
        let result = try connection.query(
            "SELECT $1::text AS text, $2::int + 1 AS next, $3::text IS NULL AS missing", [sneaky, "41", nil])
        XCTAssertEqual(result.columns, ["text", "next", "missing"])
        XCTAssertEqual(result.types, [25, 23, 16])
        XCTAssertEqual(result.rows, [[sneaky, "42", "t"]])
    }

    func testRowsComeOneAtATimeAndStoppingEndsAnEndlessQuery() throws {
        let connection = try PostgresConnection(settings: try server().url)
        var seen: [String?] = []
        // In the select list the series streams (in FROM it would be stored whole first).
        try connection.eachRow("SELECT generate_series(1, 1000000000000) AS n") { row in
            seen.append(row.values[0])
            return seen.count < 3
        }
        XCTAssertEqual(seen, ["1", "2", "3"])
        // The connection is ready for the next statement.
        XCTAssertEqual(try connection.query("SELECT 1").rows, [["1"]])
    }

    func testCopyInWritesEveryValueAsItIsAndARefusedValueFailsTheWholeCopy() throws {
        let connection = try PostgresConnection(settings: try server().url)
        try connection.execute("CREATE TEMP TABLE copied (n int, note text, at timestamptz)")
        let awkward = "tab\there\nnew line\\back\r\\N é 😀"
        let many = (10..<5_010).map { ["\($0)", String(repeating: "x", count: 100), nil] as [String?] }
        try connection.copyIn(
            "COPY copied (n, note, at) FROM STDIN",
            rows: [["1", awkward, "2026-12-03 10:00:00+00"], ["2", nil, nil], ["3", "", nil]] + many)
        XCTAssertEqual(
            try connection.query("SELECT n, note, at IS NULL FROM copied WHERE n <= 3 ORDER BY n").rows,
            [["1", awkward, "f"], ["2", nil, "t"], ["3", "", "t"]])
        XCTAssertEqual(try connection.query("SELECT count(*) FROM copied").rows, [["5003"]])
        XCTAssertThrowsError(try connection.copyIn("COPY copied (n) FROM STDIN", rows: [["4"], ["five"]])) { error in
            XCTAssertTrue("\(error)".contains("invalid input syntax for type integer"), "\(error)")
            XCTAssertEqual((error as? PostgresError)?.connectionLost, false)
        }
        // Nothing of the refused copy is there, and the connection goes on.
        XCTAssertEqual(try connection.query("SELECT count(*) FROM copied").rows, [["5003"]])
    }

    func testCopyTextEscapesWhatWouldEndAFieldOrALine() {
        var buffer: [UInt8] = []
        CopyText.append(["a\tb", nil, "c\\d\ne\rf", "plain"], to: &buffer)
        XCTAssertEqual(
            String(decoding: buffer, as: UTF8.self), #"a\tb"# + "\t" + #"\N"# + "\t" + #"c\\d\ne\rf"# + "\tplain\n")
    }

    func testAConstraintViolationCarriesItsSQLState() throws {
        let connection = try PostgresConnection(settings: try server().url)
        try connection.execute("CREATE TEMP TABLE once (id int PRIMARY KEY)")
        try connection.query("INSERT INTO once VALUES ($1)", ["1"])
        XCTAssertThrowsError(try connection.query("INSERT INTO once VALUES ($1)", ["1"])) { error in
            let failure = error as? PostgresError
            XCTAssertEqual(failure?.sqlState, "23505")
            XCTAssertEqual(failure?.isConstraintViolation, true)
            XCTAssertEqual(failure?.connectionLost, false)
            XCTAssertTrue(failure?.message.contains("duplicate key value violates unique constraint") == true)
        }
    }

    func testAServerThatIsNotThereIsALostConnectionThatSaysSo() {
        let port = freeLoopbackPort()
        XCTAssertThrowsError(try PostgresConnection(settings: "postgresql://postgres@127.0.0.1:\(port)/postgres")) {
            error in
            let failure = error as? PostgresError
            XCTAssertEqual(failure?.connectionLost, true)
            XCTAssertTrue(failure?.message.contains("Connection refused") == true, failure?.message ?? "")
        }
    }

    func testLogicalReplicationStreamsATransactionAndTheStatusUpdateMovesTheSlot() throws {
        let server = try server()
        try server.psql(
            "CREATE TABLE stream_me (id int PRIMARY KEY, note text); CREATE PUBLICATION stream_pub FOR TABLE stream_me")
        let replication = try PostgresConnection(settings: server.url, replication: true)
        try replication.query("CREATE_REPLICATION_SLOT stream_slot LOGICAL pgoutput NOEXPORT_SNAPSHOT")
        try server.psql("INSERT INTO stream_me VALUES (1, 'one'), (2, NULL)")
        try replication.startCopyBoth(
            "START_REPLICATION SLOT stream_slot LOGICAL 0/0 (proto_version '1', publication_names 'stream_pub')")
        var decoder = PgOutputDecoder()
        var messages: [PgOutputDecoder.Message] = []
        var commitEnd: LogSequenceNumber?
        let deadline = Date(timeIntervalSinceNow: 20)
        while commitEnd == nil, Date() < deadline {
            guard let bytes = try replication.readCopyData(timeoutMilliseconds: 200) else { continue }
            guard case .logData(_, _, _, let payload) = try ReplicationMessage(bytes) else { continue }
            let message = try decoder.decode(payload)
            messages.append(message)
            if case .commit(_, let end, _) = message { commitEnd = end }
        }
        let end = try XCTUnwrap(commitEnd)
        let inserted = messages.compactMap { message -> [PgOutputDecoder.Value]? in
            if case .insert(_, let new) = message { return new }
            return nil
        }
        XCTAssertEqual(inserted, [[.text("1"), .text("one")], [.text("2"), .null]])
        guard case .begin = messages.first else { return XCTFail("\(messages)") }
        try replication.writeCopyData(
            ReplicationMessage.standbyStatus(written: end, flushed: end, applied: end, clock: 0))
        var confirmed = ""
        while confirmed != end.description, Date() < deadline {
            confirmed = try server.psql(
                "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'stream_slot'")
            _ = try replication.readCopyData(timeoutMilliseconds: 50)
        }
        XCTAssertEqual(confirmed, end.description)
    }
}
