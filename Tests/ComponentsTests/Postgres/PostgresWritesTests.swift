import RivuletTestSupport
import XCTest

@testable import Components

final class PostgresWritesTests: LeakCheckingTestCase {
    private typealias Row = PostgresWrites.Row

    /// The statements that copy `rows` into the staging table and move them into `table`.
    private func staged(_ table: String, _ names: String, _ rows: [[String?]], _ conflicts: String)
        -> [PostgresWrites.Statement]
    {
        [
            .init(
                sql:
                    #"CREATE TEMPORARY TABLE IF NOT EXISTS "rivulet_staged_rows" AS SELECT "#
                    + "\(names) FROM \(table) WITH NO DATA"),
            .init(sql: #"TRUNCATE "rivulet_staged_rows""#),
            .init(sql: #"COPY "rivulet_staged_rows" ("# + names + ") FROM STDIN", copying: rows),
            .init(
                sql: "INSERT INTO \(table) (\(names)) SELECT \(names) FROM \"rivulet_staged_rows\"" + conflicts),
        ]
    }

    func testUpsertsAndDeletesRunInTheirOrderEachRunOfInsertsAsOneCopy() {
        let writes = PostgresWrites(table: "shop.orders", columns: ["id", "total"], key: ["id"], idColumn: nil)
        let statements = writes.statements(for: [
            Row(values: ["1", "2.5"], deletes: false), Row(values: ["2", nil], deletes: false),
            Row(values: ["1", nil], deletes: true), Row(values: ["1", "7"], deletes: false),
        ])
        let upsert = #" ON CONFLICT ("id") DO UPDATE SET "total" = EXCLUDED."total""#
        XCTAssertEqual(
            statements,
            staged(#""shop"."orders""#, #""id", "total""#, [["1", "2.5"], ["2", nil]], upsert)
                + [.init(sql: #"DELETE FROM "shop"."orders" WHERE "id" IN ($1)"#, parameters: ["1"])]
                + staged(#""shop"."orders""#, #""id", "total""#, [["1", "7"]], upsert))
    }

    func testWithoutKeyOrIdsRowsAreCopiedStraightIntoTheTable() {
        let writes = PostgresWrites(table: "t", columns: ["a", "b", "c"], key: [], idColumn: nil)
        let rows = (0..<50_000).map { Row(values: [String($0), nil, "x"], deletes: false) }
        XCTAssertEqual(
            writes.statements(for: rows),
            [.init(sql: #"COPY "t" ("a", "b", "c") FROM STDIN"#, copying: rows.map(\.values))])
    }

    func testAKeyWrittenTwiceInOneRunKeepsItsLastRow() {
        let writes = PostgresWrites(table: "t", columns: ["a", "b", "v"], key: ["a", "b"], idColumn: nil)
        let statements = writes.statements(for: [
            Row(values: ["1", "x", "old"], deletes: false), Row(values: ["2", "x", "other"], deletes: false),
            Row(values: ["1", "x", "new"], deletes: false),
        ])
        XCTAssertEqual(statements.compactMap(\.copying), [[["2", "x", "other"], ["1", "x", "new"]]])
        let deletes = writes.statements(for: [
            Row(values: ["1", "x", nil], deletes: true), Row(values: ["1", "x", nil], deletes: true),
        ])
        XCTAssertEqual(
            deletes, [.init(sql: #"DELETE FROM "t" WHERE ("a", "b") IN (($1, $2))"#, parameters: ["1", "x"])])
    }

    func testWithIdsAndNoKeyARowAlreadyThereIsNotInsertedAgain() {
        let writes = PostgresWrites(table: "log", columns: ["note", "change_id"], key: [], idColumn: "change_id")
        XCTAssertEqual(
            writes.statement(for: Row(values: ["hi", "slot:0/1"], deletes: false)).sql,
            #"INSERT INTO "log" ("note", "change_id") VALUES ($1, $2) ON CONFLICT ("change_id") DO NOTHING"#)
        XCTAssertEqual(
            writes.statements(for: [Row(values: ["hi", "slot:0/1"], deletes: false)]),
            staged(
                #""log""#, #""note", "change_id""#, [["hi", "slot:0/1"]], #" ON CONFLICT ("change_id") DO NOTHING"#))
        XCTAssertEqual(
            writes.createTable(types: ["text", "text"]),
            #"CREATE TABLE IF NOT EXISTS "log" ("note" text, "change_id" text, UNIQUE ("change_id"))"#)
    }

    func testAStatementNeverBindsMoreParametersThanTheProtocolCounts() {
        let writes = PostgresWrites(table: "t", columns: ["a", "b", "c"], key: ["a", "b", "c"], idColumn: nil)
        let rows = (0..<50_000).map { Row(values: [String($0), "y", "x"], deletes: true) }
        let statements = writes.statements(for: rows)
        XCTAssertEqual(statements.count, 3)
        XCTAssertTrue(statements.allSatisfy { $0.parameters.count <= PostgresWrites.parameterLimit })
        XCTAssertEqual(statements.map(\.parameters.count).reduce(0, +), 150_000)
    }

    func testNamesAreQuotedWhateverTheyHold() {
        let writes = PostgresWrites(table: #"we"ird"#, columns: ["Mixed Case"], key: ["Mixed Case"], idColumn: nil)
        XCTAssertEqual(
            writes.statement(for: Row(values: ["1"], deletes: false)).sql,
            #"INSERT INTO "we""ird" ("Mixed Case") VALUES ($1) ON CONFLICT ("Mixed Case") DO NOTHING"#)
    }
}
