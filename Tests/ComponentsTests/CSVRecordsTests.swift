import Pipeline
import RivuletTestSupport
import XCTest

@testable import Components

/// One CSV line at a time: fields split at the separator outside quotes, `""` a quote, the header's
/// names made into an object, numbers read on request, and what is not a record told as such.
final class CSVRecordsTests: LeakCheckingTestCase {
    private func fields(_ line: String, _ records: CSVRecords = CSVRecords()) throws -> [String] {
        let bytes = Array(line.utf8)
        return try bytes.withUnsafeBufferPointer { try records.fields($0) }
    }

    private func failure(_ line: String, _ records: CSVRecords = CSVRecords()) -> String {
        do {
            _ = try fields(line, records)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    func testFieldsAreSplitOutsideQuotesAndADoubledQuoteIsOne() throws {
        XCTAssertEqual(try fields("a,b,,c"), ["a", "b", "", "c"])
        XCTAssertEqual(try fields(#""x, y","say ""hi""",z"#), ["x, y", #"say "hi""#, "z"])
        XCTAssertEqual(try fields("a,b\r"), ["a", "b"], "a CRLF line's carriage return is not data")
        XCTAssertEqual(try fields(""), [""])
        XCTAssertEqual(try fields("a;\"b;c\"", CSVRecords(separator: UInt8(ascii: ";"))), ["a", "b;c"])
        XCTAssertEqual(try fields("a\tb", CSVRecords(separator: 0x09)), ["a", "b"])
    }

    func testAStrayQuoteOrAnUnclosedOneIsNotARecord() {
        XCTAssertEqual(
            failure(#"a,b"c"#), "a quote inside an unquoted field (column 4); quote the field and double the quote")
        XCTAssertEqual(failure(#""a"b,c"#), "text after a quoted field's closing quote (column 4)")
        XCTAssertEqual(
            failure(#"a,"b"#), "a quoted field is not closed by the end of the line (a record is one line)")
    }

    func testARecordIsAnObjectOfTheHeaderOrAListAndNumbersAreReadOnRequest() throws {
        let names = ["route", "ms", "code"]
        XCTAssertEqual(
            try CSVRecords().value(["/a", "12", "007"], names: names), ["route": "/a", "ms": "12", "code": "007"])
        XCTAssertEqual(
            try CSVRecords(numbers: true).value(["/a", "12.5", "007"], names: names),
            ["route": "/a", "ms": 12.5, "code": "007"], "007 is not written as a number: it stays text")
        XCTAssertEqual(
            try CSVRecords(numbers: true).value(["-3", "2e3", "+1", ""], names: nil), [-3, 2000.0, "+1", ""])
        XCTAssertThrowsError(try CSVRecords().value(["a"], names: names)) { error in
            XCTAssertEqual("\(error)", "1 field where the header has 3")
        }
    }
}
