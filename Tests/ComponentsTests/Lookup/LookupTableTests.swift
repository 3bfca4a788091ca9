import Foundation
import Pipeline
import RivuletTestSupport
import SQLite
import XCTest

@testable import Components

/// A lookup table read from CSV, JSON Lines and SQLite, keyed by a column compared as text; and
/// read again only when its file changed, keeping the last good table when the new one is bad.
final class LookupTableTests: LeakCheckingTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lookup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func write(_ text: String, to name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func read(_ path: String, key: String, table: String? = nil, numbers: Bool = false) throws -> LookupTable {
        try LookupTable.read(path: path, key: key, sqliteTable: table, csv: CSVRecords(header: true, numbers: numbers))
    }

    func testACSVTableIsKeyedByItsColumnAndKeysCompareAsText() throws {
        let path = try write("id,team\n42,shop\n\"7\",\"a, b\"\n42,later\n", to: "t.csv")
        let table = try read(path, key: "id")
        XCTAssertEqual(table.rows[LookupTable.keyText(.int(42))], ["id": "42", "team": "later"], "the last row wins")
        XCTAssertEqual(table.rows[LookupTable.keyText(.string("7"))]?["team"], "a, b")
        XCTAssertNil(table.rows["8"])
        let typed = try read(path, key: "id", numbers: true)
        XCTAssertEqual(typed.rows["42"]?["id"], .int(42), "numbers: true reads numbers")
    }

    func testJSONLinesAndSQLiteTables() throws {
        let lines = try write("{\"k\": 1, \"v\": \"one\"}\n\n{\"k\": \"two\", \"v\": 2}\n", to: "t.jsonl")
        let table = try read(lines, key: "k")
        XCTAssertEqual(table.rows["1"]?["v"], "one")
        XCTAssertEqual(table.rows["two"]?["v"], .int(2))

        let path = directory.appendingPathComponent("t.db").path
        let database = try SQLiteDatabase(path: path, create: true)
        try database.execute("CREATE TABLE owners (route TEXT, team TEXT, size INTEGER)")
        try database.execute("INSERT INTO owners VALUES ('/a', 'shop', 3), ('/b', NULL, 4)")
        let sqlite = try read(path, key: "route", table: "owners")
        XCTAssertEqual(sqlite.rows["/a"], ["route": "/a", "team": "shop", "size": .int(3)])
        XCTAssertEqual(sqlite.rows["/b"]?["team"], .null)
        try database.execute("CREATE TABLE empty (route TEXT)")
        XCTAssertEqual(try read(path, key: "route", table: "empty").rows.count, 0)
        XCTAssertThrowsError(try read(path, key: "rout", table: "empty")) {
            XCTAssertTrue("\($0)".hasSuffix("has no column 'rout' to key the table by; its columns: route"), "\($0)")
        }
        XCTAssertThrowsError(try read(path, key: "route", table: "nope")) {
            XCTAssertTrue("\($0)".contains("cannot read table 'nope'"), "\($0)")
        }
    }

    func testWhatCannotBeATableSaysWhy() throws {
        let noKey = try write("route,team\n/a,x\n", to: "a.csv")
        XCTAssertThrowsError(try read(noKey, key: "rout")) {
            XCTAssertTrue("\($0)".hasSuffix("its columns: route, team"), "\($0)")
        }
        let short = try write("route,team\n/a\n", to: "b.csv")
        XCTAssertThrowsError(try read(short, key: "route")) {
            XCTAssertEqual("\($0)", "'\(short)' line 2: 1 field where the header has 2")
        }
        let notJSON = try write("{\"k\": 1}\n[1]\n", to: "c.jsonl")
        XCTAssertThrowsError(try read(notJSON, key: "k")) {
            XCTAssertEqual("\($0)", "'\(notJSON)' line 2 is not a JSON object")
        }
        XCTAssertThrowsError(try read(directory.appendingPathComponent("gone.csv").path, key: "k")) {
            XCTAssertTrue("\($0)".contains("No such file"), "\($0)")
        }
    }

    func testAChangedFileIsReadAgainAndABadOneKeepsTheTableWithOneWarning() throws {
        let path = try write("k,v\na,1\n", to: "t.csv")
        let file = try LookupFile(path: path, key: "k", sqliteTable: nil, csv: CSVRecords())
        var warnings: [String] = []
        XCTAssertEqual(file.refresh { warnings.append($0) }.rows["a"]?["v"], "1", "unchanged: the same table")
        _ = try write("k,v\na,2\nb,3\n", to: "t.csv")
        XCTAssertEqual(file.refresh { warnings.append($0) }.rows["a"]?["v"], "2")
        _ = try write("key,v\na,9\n", to: "t.csv")
        for _ in 0..<3 { XCTAssertEqual(file.refresh { warnings.append($0) }.rows["b"]?["v"], "3") }
        XCTAssertEqual(warnings.count, 1, "once for that version: \(warnings)")
        XCTAssertTrue(warnings.first?.hasSuffix("the table read before is kept") == true, "\(warnings)")
        _ = try write("k,v\nc,4\n", to: "t.csv")
        XCTAssertEqual(file.refresh { warnings.append($0) }.rows.keys.sorted(), ["c"])
    }

    func testAnElementNoRowMatchesGoesOnIsDroppedOrIsAnElementError() throws {
        let path = try write("route,team\n/a,shop\n", to: "owners.csv")
        func run(_ options: String) throws -> [String] {
            try PipelineHarness().run(
                """
                source: { events: [{ at: 0ms, next: { r: /a } }, { at: 1ms, next: { r: /x } }, { at: 2ms, complete: true }] }
                ops: [{ lookup: { path: \(path), key: route, by: .r, as: o\(options) } }]
                sink: record
                """
            ).events()
        }
        XCTAssertEqual(
            try run(""),
            [#"0: {"r":"/a","o":{"route":"/a","team":"shop"}}"#, #"1: {"r":"/x","o":null}"#, "2: completed"])
        XCTAssertEqual(
            try run(", missing: drop"), [#"0: {"r":"/a","o":{"route":"/a","team":"shop"}}"#, "2: completed"])
        XCTAssertEqual(
            try run(", missing: error, onError: skip"),
            [#"0: {"r":"/a","o":{"route":"/a","team":"shop"}}"#, "2: completed"], "the element is skipped")
        let failed = try run(", missing: error")
        XCTAssertEqual(failed.count, 2)
        XCTAssertTrue(failed[1].contains("no row of '\(path)' has \"/x\" in its key column"), failed[1])
    }
}
