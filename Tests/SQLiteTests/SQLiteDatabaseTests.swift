import Foundation
import SQLite
import XCTest

/// The SQLite wrapper: rows streamed as SQLite makes them, and statements a check can interrupt.
final class SQLiteDatabaseTests: XCTestCase {
    private let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"

    private func database() throws -> SQLiteDatabase {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("db-\(UUID().uuidString)").path
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return try SQLiteDatabase(path: path, create: true)
    }

    func testRowsAreHandedOverOneAtATimeUntilTheReaderStops() throws {
        let database = try database()
        var seen: [SQLiteDatabase.Parameter] = []
        try database.eachRow(endless) { row in
            XCTAssertEqual(row.columns, ["x"])
            seen.append(contentsOf: row.values)
            return seen.count < 3
        }
        XCTAssertEqual(seen, [.integer(1), .integer(2), .integer(3)])
        // The statement is reset: the same query runs again from its start.
        XCTAssertEqual(try database.rows("SELECT 7 AS n, 'a' AS s").first?.values, [.integer(7), .text("a")])
    }

    func testAnInterruptStopsAStatementThatWouldNeverReturnARow() throws {
        let database = try database()
        nonisolated(unsafe) var checks = 0
        database.interrupt {
            checks += 1
            return checks > 100
        }
        XCTAssertThrowsError(try database.eachRow(endless + " ORDER BY x DESC") { _ in true }) { error in
            XCTAssertEqual((error as? SQLiteError)?.code, sqliteInterruptCode)
        }
    }
}

/// SQLite's code for an interrupted statement.
private let sqliteInterruptCode: Int32 = 9
