import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// The `postgres` sink against a real server of the test's own.
final class PostgresSinkTests: PostgresBinaryTestCase {
    private func write(_ lines: [String], to name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testRowsAreUpsertedAndDeletedByKeyInTheirOrderAndARefusedRowIsSkipped() throws {
        let input = try write(
            [
                #"{"op":"insert","id":1,"who":"ann","total":2.5,"tags":["x"]}"#,
                #"{"op":"insert","id":2,"who":"bo","total":3,"tags":[]}"#,
                #"{"op":"update","id":1,"who":"ann","total":9.5,"tags":null}"#,
                #"{"op":"insert","id":3,"who":"cy","total":"lots","tags":null}"#,
                #"{"op":"delete","id":2}"#,
                #"{"op":"insert","id":4,"who":"di","total":1,"tags":{"vip":true}}"#,
            ], to: "changes.jsonl")
        try server.psql("CREATE TABLE totals (id int PRIMARY KEY, who text NOT NULL, total numeric(8,2), tags jsonb)")
        let result = try run(
            """
            source: { fixture: \(input) }
            sink:
              postgres:
                url: "\(server.url)"
                table: totals
                columns: { id: .id, who: .who, total: .total, tags: .tags }
                key: [id]
                delete: .op == "delete"
                onError: skip
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        assertContains(result.stderr, "postgres skipped 1 element")
        assertContains(result.stderr, #"invalid input syntax for type numeric: "lots""#)
        XCTAssertEqual(
            try server.psql("SELECT id, who, total, tags FROM totals ORDER BY id"),
            "1|ann|9.50|\n4|di|1.00|{\"vip\": true}")
    }

    func testAMissingTableIsCreatedFromTheFirstRowAndARefusedRowFailsTheRunByDefault() throws {
        let input = try write(
            [#"{"id":1,"name":"a","score":1.5,"ok":true,"meta":{"k":1}}"#, #"{"id":"two","name":"b"}"#],
            to: "rows.jsonl")
        let result = try run(
            """
            source: { fixture: \(input) }
            sink: { postgres: { url: "\(server.url)", table: made, key: [id] } }
            """)
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "error: postgres: made: invalid input syntax for type bigint: \"two\"")
        XCTAssertEqual(
            try server.psql(
                "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'made'"
            ), "id bigint, name text, score double precision, ok boolean, meta jsonb")
        // The transaction holding the refused row was not committed.
        XCTAssertEqual(try server.psql("SELECT count(*) FROM made"), "0")
    }

    func testALostConnectionIsTriedAgainAndNoRowIsLost() throws {
        let pipeline = directory.appendingPathComponent("p.yaml")
        try """
        source: { interval: 50ms }
        ops: [ { take: 60 }, { map: { n: . } } ]
        sink: { postgres: { url: "\(server.url)", table: ticks, key: [n], batch: { count: 5, period: 100ms } } }
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let runner = try startRivulet(["run", pipeline.path])
        Thread.sleep(forTimeInterval: 1)
        server.stop(mode: "immediate", deleting: false)
        Thread.sleep(forTimeInterval: 1.5)
        try server.start()
        let end = runner.communicate(timeout: 60)
        XCTAssertEqual(end.termination, .exited(0), String(decoding: end.standardError, as: UTF8.self))
        XCTAssertEqual(try server.psql("SELECT count(*), min(n), max(n) FROM ticks"), "60|0|59")
    }

    func testAServerThatStaysAwayFailsTheRunAfterRetryForWithoutShowingThePassword() throws {
        let pipeline = directory.appendingPathComponent("p.yaml")
        let url = server.url.replacingOccurrences(of: "postgres@", with: "postgres:s3cret-pw@")
        try """
        source: { interval: 50ms }
        ops: [ { map: { n: . } } ]
        sink: { postgres: { url: "\(url)", table: ticks, retryFor: 2s, batch: { count: 5, period: 100ms } } }
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let runner = try startRivulet(["run", pipeline.path])
        Thread.sleep(forTimeInterval: 0.8)
        server.stop(mode: "fast", deleting: false)
        let end = runner.communicate(timeout: 60)
        let errors = String(decoding: end.standardError, as: UTF8.self)
        XCTAssertEqual(end.termination, .exited(1), errors)
        assertContains(errors, "tried again for 2s (retryFor)")
        assertContains(errors, "error: postgres: ")
        XCTAssertFalse(errors.contains("s3cret-pw"), errors)
    }
}
