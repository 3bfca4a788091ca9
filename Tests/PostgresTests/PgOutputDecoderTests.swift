import Postgres
import XCTest

/// Messages built byte by byte as PostgreSQL's `pgoutput` writes them (protocol version 1).
final class PgOutputDecoderTests: XCTestCase {
    private func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    private func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    private func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    private func cString(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }
    private func text(_ value: String) -> [UInt8] {
        [UInt8(ascii: "t")] + u32(UInt32(value.utf8.count)) + Array(value.utf8)
    }

    /// `public.orders (id int4 key, note text)` as table 16385.
    private var relation: [UInt8] {
        [UInt8(ascii: "R")] + u32(16385) + cString("public") + cString("orders") + [UInt8(ascii: "d")] + u16(2)
            + [1] + cString("id") + u32(23) + u32(0xFFFF_FFFF)
            + [0] + cString("note") + u32(25) + u32(0xFFFF_FFFF)
    }

    func testATransactionDecodesToBeginChangesAndCommit() throws {
        var decoder = PgOutputDecoder()
        let begin = try decoder.decode(([UInt8(ascii: "B")] + u64(0x200) + u64(5_000_000) + u32(42))[...])
        XCTAssertEqual(begin, .begin(finalLSN: LogSequenceNumber(0x200), commitTime: 5_000_000, transaction: 42))
        guard case .relation(let orders) = try decoder.decode(relation[...]) else { return XCTFail("no relation") }
        XCTAssertEqual(orders.columns.map(\.name), ["id", "note"])
        XCTAssertEqual(orders.columns.map(\.isKey), [true, false])
        let insert = [UInt8(ascii: "I")] + u32(16385) + [UInt8(ascii: "N")] + u16(2) + text("7") + [UInt8(ascii: "n")]
        XCTAssertEqual(try decoder.decode(insert[...]), .insert(orders, new: [.text("7"), .null]))
        let update =
            [UInt8(ascii: "U")] + u32(16385) + [UInt8(ascii: "K")] + u16(2) + text("7") + [UInt8(ascii: "n")]
            + [UInt8(ascii: "N")] + u16(2) + text("8") + [UInt8(ascii: "u")]
        XCTAssertEqual(
            try decoder.decode(update[...]), .update(orders, old: [.text("7"), .null], new: [.text("8"), .unchanged]))
        let updateInPlace = [UInt8(ascii: "U")] + u32(16385) + [UInt8(ascii: "N")] + u16(2) + text("8") + text("é")
        XCTAssertEqual(
            try decoder.decode(updateInPlace[...]), .update(orders, old: nil, new: [.text("8"), .text("é")]))
        let delete = [UInt8(ascii: "D")] + u32(16385) + [UInt8(ascii: "K")] + u16(2) + text("8") + [UInt8(ascii: "n")]
        XCTAssertEqual(try decoder.decode(delete[...]), .delete(orders, old: [.text("8"), .null]))
        let truncate = [UInt8(ascii: "T")] + u32(1) + [3] + u32(16385)
        XCTAssertEqual(try decoder.decode(truncate[...]), .truncate([orders], cascade: true, restartIdentity: true))
        let commit = [UInt8(ascii: "C"), 0] + u64(0x200) + u64(0x230) + u64(5_000_000)
        XCTAssertEqual(
            try decoder.decode(commit[...]),
            .commit(commitLSN: LogSequenceNumber(0x200), end: LogSequenceNumber(0x230), commitTime: 5_000_000))
        XCTAssertEqual(
            try decoder.decode(([UInt8(ascii: "O")] + u64(1) + cString("node"))[...]), .other(UInt8(ascii: "O")))
    }

    func testAChangeOfATableNeverDescribedIsAnError() {
        var decoder = PgOutputDecoder()
        let insert = [UInt8(ascii: "I")] + u32(99) + [UInt8(ascii: "N")] + u16(0)
        XCTAssertThrowsError(try decoder.decode(insert[...])) { error in
            XCTAssertEqual(
                (error as? PostgresError)?.message, "a change of table 99, which no Relation message described")
        }
    }

    func testARowWhoseWidthDiffersFromItsDescriptionIsAnError() throws {
        var decoder = PgOutputDecoder()
        _ = try decoder.decode(relation[...])
        let insert = [UInt8(ascii: "I")] + u32(16385) + [UInt8(ascii: "N")] + u16(1) + text("7")
        XCTAssertThrowsError(try decoder.decode(insert[...])) { error in
            XCTAssertEqual(
                (error as? PostgresError)?.message, "a row of public.orders with 1 columns; its description has 2")
        }
    }

    func testEveryTruncationOfAMessageIsAnErrorNotACrash() throws {
        var full = PgOutputDecoder()
        _ = try full.decode(relation[...])
        let update =
            [UInt8(ascii: "U")] + u32(16385) + [UInt8(ascii: "K")] + u16(2) + text("7") + [UInt8(ascii: "n")]
            + [UInt8(ascii: "N")] + u16(2) + text("8") + [UInt8(ascii: "u")]
        for length in 0..<update.count {
            var decoder = full
            XCTAssertThrowsError(try decoder.decode(update.prefix(length)), "\(length) bytes")
        }
        for length in 1..<relation.count {
            var decoder = PgOutputDecoder()
            XCTAssertThrowsError(try decoder.decode(relation.prefix(length)), "\(length) bytes")
        }
    }
}
