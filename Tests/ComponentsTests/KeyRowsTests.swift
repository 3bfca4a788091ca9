import Pipeline
import RivuletTestSupport
import XCTest

@testable import Components

/// `KeyRows`: text keys found by their bytes, other keys by value, one row per key either way.
final class KeyRowsTests: LeakCheckingTestCase {
    private func row(_ rows: KeyRows, text: String) -> Int?? {
        Array(text.utf8).withUnsafeBufferPointer { rows.row(ofText: $0) }
    }

    func testATextKeyIsFoundByItsBytesAndByItsValueAlike() {
        var rows = KeyRows()
        rows.set("api", row: 0)
        rows.set(.int(7), row: 1)
        rows.set("", row: 2)
        rows.set("a key longer than eight bytes", row: 3)
        XCTAssertEqual(row(rows, text: "api"), .some(0))
        XCTAssertEqual(rows.row(of: "api"), 0)
        XCTAssertEqual(row(rows, text: ""), .some(2), "the empty text is a key too")
        XCTAssertEqual(row(rows, text: "a key longer than eight bytes"), .some(3))
        XCTAssertEqual(row(rows, text: "a key longer than eight byteS"), .some(nil))
        XCTAssertEqual(row(rows, text: "ap"), .some(nil), "a prefix is another key")
        XCTAssertEqual(rows.row(of: .int(7)), 1)
        XCTAssertNil(rows.row(of: "7"), "text and numbers are different keys")
        XCTAssertEqual(rows.count, 4)
        rows.set("api", row: 9)
        XCTAssertEqual(rows.row(of: "api"), 9, "setting a key again moves it")
        XCTAssertEqual(rows.count, 4)
    }

    func testTextBeyondASCIIIsLeftToTheValuesAndComparesAsStringsDo() {
        var rows = KeyRows()
        rows.set("caf\u{E9}", row: 0)
        XCTAssertTrue(row(rows, text: "caf\u{E9}") == nil, "not ASCII: looked up as a value")
        XCTAssertEqual(rows.row(of: "caf\u{E9}"), 0)
        XCTAssertEqual(rows.row(of: "cafe\u{301}"), 0, "canonically equal text is the same key")
    }

    func testManyKeysKeepTheirRowsAndRemoveAllForgetsThem() {
        var rows = KeyRows()
        for index in 0..<5000 { rows.set(.string("k\(index)"), row: index) }
        for index in 0..<5000 {
            XCTAssertEqual(row(rows, text: "k\(index)"), .some(index))
            XCTAssertEqual(rows.row(of: .string("k\(index)")), index)
        }
        XCTAssertEqual(rows.count, 5000)
        rows.removeAll()
        XCTAssertEqual(rows.count, 0)
        XCTAssertEqual(row(rows, text: "k1"), .some(nil))
        rows.set("k1", row: 0)
        XCTAssertEqual(rows.row(of: "k1"), 0)
    }

    func testKeysOfEightBytesAndLongerAreToldApartPastTheirPrefixAcrossGrowth() {
        var rows = KeyRows()
        // Keys that share their first eight bytes (a slot's prefix) and differ after them, keys of
        // exactly eight bytes, and keys a byte shorter: moved to new slots as the table grows.
        for index in 0..<3000 {
            rows.set(.string("prefix8_\(index)"), row: 3 * index)
            rows.set(.string(String(format: "%08d", index)), row: 3 * index + 1)
            rows.set(.string(String(format: "%07d", index)), row: 3 * index + 2)
        }
        XCTAssertEqual(rows.count, 9000)
        for index in 0..<3000 {
            XCTAssertEqual(row(rows, text: "prefix8_\(index)"), .some(3 * index))
            XCTAssertEqual(row(rows, text: String(format: "%08d", index)), .some(3 * index + 1))
            XCTAssertEqual(row(rows, text: String(format: "%07d", index)), .some(3 * index + 2))
        }
        XCTAssertEqual(row(rows, text: "prefix8_"), .some(nil), "the prefix alone is another key")
        XCTAssertEqual(row(rows, text: "prefix8_3000"), .some(nil))
        XCTAssertEqual(row(rows, text: "00000000\u{0}"), .some(nil), "a zero byte past the end counts")
        XCTAssertEqual(row(rows, text: "0000000\u{0}"), .some(nil))
    }

    func testTheHashSeesEveryByteAndRefusesAnyBeyondASCII() {
        func hash(_ text: String) -> UInt64? {
            Array(text.utf8).withUnsafeBufferPointer { KeyRows.hash($0, seed: 1) }
        }
        XCTAssertNotEqual(hash("abcdefgh1"), hash("abcdefgh2"))
        XCTAssertNotEqual(hash("a"), hash("a\u{0}"), "the length counts")
        XCTAssertNil(hash("abcdefg\u{E9}"))
        XCTAssertNil(hash("\u{E9}"))
        XCTAssertNotNil(hash(""))
    }
}
