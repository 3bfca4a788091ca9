import XCTest

@testable import Components

final class PostgresWritesTests: XCTestCase {
    private typealias Row = PostgresWrites.Row

    func testUpsertsAndDeletesRunInTheirOrderEachRunAsOneStatement() {
        let writes = PostgresWrites(table: "shop.orders", columns: ["id", "total"], key: ["id"], idColumn: nil)
        let statements = writes.statements(for: [
            Row(values: ["1", "2.5"], deletes: false), Row(values: ["2", nil], deletes: false),
            Row(values: ["1", nil], deletes: true), Row(values: ["1", "7"], deletes: false),
        ])
        XCTAssertEqual(
            statements,
            [
                .init(
                    sql: #"INSERT INTO "shop"."orders" ("id", "total") VALUES ($1, $2), ($3, $4)"#
                        + #" ON CONFLICT ("id") DO UPDATE SET "total" = EXCLUDED."total""#,
                    parameters: ["1", "2.5", "2", nil]),
                .init(sql: #"DELETE FROM "shop"."orders" WHERE "id" IN ($1)"#, parameters: ["1"]),
                .init(
                    sql: #"INSERT INTO "shop"."orders" ("id", "total") VALUES ($1, $2)"#
                        + #" ON CONFLICT ("id") DO UPDATE SET "total" = EXCLUDED."total""#,
                    parameters: ["1", "7"]),
            ])
    }

    func testAKeyWrittenTwiceInOneRunKeepsItsLastRow() {
        let writes = PostgresWrites(table: "t", columns: ["a", "b", "v"], key: ["a", "b"], idColumn: nil)
        let statements = writes.statements(for: [
            Row(values: ["1", "x", "old"], deletes: false), Row(values: ["2", "x", "other"], deletes: false),
            Row(values: ["1", "x", "new"], deletes: false),
        ])
        XCTAssertEqual(statements.map(\.parameters), [["2", "x", "other", "1", "x", "new"]])
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
            writes.createTable(types: ["text", "text"]),
            #"CREATE TABLE IF NOT EXISTS "log" ("note" text, "change_id" text, UNIQUE ("change_id"))"#)
    }

    func testAStatementNeverBindsMoreParametersThanTheProtocolCounts() {
        let writes = PostgresWrites(table: "t", columns: ["a", "b", "c"], key: [], idColumn: nil)
        let rows = (0..<50_000).map { Row(values: [String($0), nil, "x"], deletes: false) }
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
