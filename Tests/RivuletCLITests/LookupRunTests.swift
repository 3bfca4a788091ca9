import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// The `lookup` operator through the binary: a table from a CSV file joined to a followed log,
/// read again when the file is replaced while the run goes on; lint's errors for a missing file,
/// a misspelt key column and a SQLite file without its table.
final class LookupRunTests: BinaryTestCase {
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func lines(_ name: String) -> [String] {
        ((try? String(contentsOfFile: path(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func testAFollowedLogIsJoinedWithATableThatIsReadAgainWhenItChanges() throws {
        try "route,team\n/orders,shop\n/users,accounts\n".write(
            toFile: path("owners.csv"), atomically: true, encoding: .utf8)
        try "/orders\n/nowhere\n".write(toFile: path("routes.log"), atomically: true, encoding: .utf8)
        try """
        source: { file: { path: routes.log, follow: true } }
        ops:
          - map: { route: . }
          - lookup: { path: owners.csv, key: route, by: .route, as: owner, reload: 100ms }
          - map: { route: .route, team: .owner.team ?? "unowned" }
        sink: { file: { path: out.jsonl, flushAfter: 50ms } }
        """.write(toFile: path("p.yaml"), atomically: true, encoding: .utf8)
        let process = try startRivulet(["run", path("p.yaml")], output: .null)
        func waitFor(_ count: Int) {
            let deadline = Date(timeIntervalSinceNow: 10)
            while lines("out.jsonl").count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        }
        waitFor(2)
        // Replaced by a rename, as an editor or a deploy would: the next lines see the new table.
        try "route,team\n/orders,shipping\n/nowhere,void\n".write(
            toFile: path("owners.csv"), atomically: true, encoding: .utf8)
        Thread.sleep(forTimeInterval: 0.5)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: path("routes.log")))
        log.seekToEndOfFile()
        log.write(Data("/orders\n/nowhere\n".utf8))
        waitFor(4)
        // A table without its key column is refused; the one read before goes on being used.
        try "path,team\n/orders,broken\n".write(toFile: path("owners.csv"), atomically: true, encoding: .utf8)
        Thread.sleep(forTimeInterval: 0.5)
        log.write(Data("/orders\n".utf8))
        try log.close()
        waitFor(5)
        process.send(SIGTERM)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination, .exited(143))
        XCTAssertEqual(
            lines("out.jsonl"),
            [
                #"{"route":"/orders","team":"shop"}"#, #"{"route":"/nowhere","team":"unowned"}"#,
                #"{"route":"/orders","team":"shipping"}"#, #"{"route":"/nowhere","team":"void"}"#,
                #"{"route":"/orders","team":"shipping"}"#,
            ])
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        assertContains(stderr, "has no column 'route' to key the table by; its columns: path, team")
        assertContains(stderr, "the table read before is kept")
    }

    func testLintFindsAMissingTableAMisspeltKeyColumnAndASQLiteFileWithoutItsTable() throws {
        try "route,team\n/orders,shop\n".write(toFile: path("owners.csv"), atomically: true, encoding: .utf8)
        try Data().write(to: URL(fileURLWithPath: path("owners.db")))
        try """
        source: { events: [{ at: 0ms, complete: true }] }
        ops:
          - lookup: { path: ownrs.csv, key: route, by: .route }
          - lookup: { path: owners.csv, key: rout, by: .route }
          - lookup: { path: owners.db, key: route, by: .route }
        sink: stdout
        """.write(toFile: path("bad.yaml"), atomically: true, encoding: .utf8)
        let lint = try runRivulet(["lint", path("bad.yaml")])
        XCTAssertEqual(lint.status, 2)
        assertContains(lint.stdout + lint.stderr, "bad.yaml:3:21: error: lookup: the table 'ownrs.csv' does not exist")
        assertContains(
            lint.stdout + lint.stderr,
            "bad.yaml:4:38: error: lookup: '\(path("owners.csv"))' has no column 'rout' to key the table by; its columns: route, team"
        )
        assertContains(
            lint.stdout + lint.stderr,
            "bad.yaml:5:5: error: lookup: 'owners.db' is a SQLite file: say which table to read with 'table'")
        let run = try runRivulet(["run", path("bad.yaml")])
        XCTAssertEqual(run.status, 2, "run refuses what lint refuses")
    }
}
