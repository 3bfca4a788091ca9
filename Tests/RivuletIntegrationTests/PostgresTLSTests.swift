import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// A server that accepts TLS connections only (`hostssl` in its pg_hba.conf): the `postgres`
/// source, both its query and its changes, and the `postgres` sink reach it with the URL as it
/// is, since libpq asks for TLS first (`sslmode=prefer`).
final class PostgresTLSTests: PostgresBinaryTestCase {
    override func serverSettings() throws -> [String] {
        let folder = directory.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("server.crt").path
        let key = folder.appendingPathComponent("server.key").path
        let hba = folder.appendingPathComponent("pg_hba.conf").path
        try PostgresTestServer.run(
            "/usr/bin/openssl",
            [
                "req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key, "-out",
                certificate,
            ])
        try "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl replication all 127.0.0.1/32 trust\n"
            .write(toFile: hba, atomically: true, encoding: .utf8)
        // The server reads them as its own user, and wants its key for itself alone.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        if getuid() == 0 { try PostgresTestServer.run("/bin/chown", ["-R", "postgres", folder.path]) }
        return ["ssl=on", "ssl_cert_file=\(certificate)", "ssl_key_file=\(key)", "hba_file=\(hba)"]
    }

    func testAServerThatAsksForTLSGetsItFromTheSourceAndTheSink() throws {
        XCTAssertThrowsError(
            try PostgresTestServer.run(
                "/usr/bin/psql", ["-X", "-At", server.url + "?sslmode=disable", "-c", "SELECT 1"]),
            "a connection without TLS is refused")
        try server.psql("CREATE TABLE orders (id int PRIMARY KEY, note text)")
        let pipeline = directory.appendingPathComponent("tls.yaml").path
        let output = directory.appendingPathComponent("changes.jsonl").path
        try """
        source: { postgres: { url: "\(server.url)", query: "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()" } }
        sink: { postgres: { url: "\(server.url)", table: seen } }
        """.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let query = try runRivulet(["run", pipeline])
        XCTAssertEqual(query.status, 0, query.stderr)
        XCTAssertEqual(try server.psql("SELECT ssl FROM seen"), "t")

        let changes = directory.appendingPathComponent("changes.yaml").path
        try """
        source: { postgres: { url: "\(server.url)", slot: tls_slot, publication: tls_pub, create: true, tables: [orders] } }
        ops: [ { take: 1 }, { map: .after } ]
        sink: { file: \(output) }
        """.write(toFile: changes, atomically: true, encoding: .utf8)
        let runner = try startRivulet(["run", changes], output: .null, error: .pipe)
        defer { runner.send(SIGKILL) }
        let deadline = Date(timeIntervalSinceNow: 20)
        while try server.psql("SELECT count(*) FROM pg_replication_slots WHERE active") != "1", Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(
            try server.psql("SELECT count(*) FROM pg_stat_replication JOIN pg_stat_ssl USING (pid) WHERE ssl"), "1",
            "the replication connection is encrypted")
        try server.psql("INSERT INTO orders VALUES (1, 'sealed')")
        let end = runner.communicate(timeout: 30)
        XCTAssertEqual(end.termination, .exited(0), String(decoding: end.standardError, as: UTF8.self))
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), #"{"id":1,"note":"sealed"}"# + "\n")
    }
}
