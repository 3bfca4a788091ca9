@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

final class JSONTests: LeakCheckingTestCase {
    func testParsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#"{"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d"}, "e": ""}"#)
        XCTAssertEqual(
            value,
            ["a": [1, -2, 3.5, 1000.0, true, false, nil], "b": ["c": "d"], "e": ""])
    }

    func testKeepsIntegersAndDoublesApartWithoutLosingPrecision() throws {
        XCTAssertEqual(try JSONParser.parse("9007199254740993"), .int(9_007_199_254_740_993))
        XCTAssertEqual(try JSONParser.parse("-9223372036854775808"), .int(Int.min))
        XCTAssertEqual(try JSONParser.parse("9223372036854775808"), .double(9_223_372_036_854_775_808))
        XCTAssertEqual(try JSONParser.parse("0.1"), .double(0.1))
        XCTAssertEqual(try JSONParser.parse("1.0"), .double(1))
        XCTAssertEqual(JSONSerializer.string(.double(0.1)), "0.1")
        XCTAssertEqual(JSONSerializer.string(.double(1)), "1.0")
        // Out of Double's range: the largest finite double (found by fuzzing: it became null).
        XCTAssertEqual(try JSONParser.parse("1e400"), .double(.greatestFiniteMagnitude))
        XCTAssertEqual(try JSONParser.parse("-1e1348901234567"), .double(-.greatestFiniteMagnitude))
        let written = JSONSerializer.string(try JSONParser.parse("[1E+400]"))
        XCTAssertEqual(try JSONParser.parse(written), [.double(.greatestFiniteMagnitude)])
        XCTAssertEqual(JSONSerializer.string(.int(-42)), "-42")
        for integer in [0, 7, -7, 10, 1_000_000, Int.max, Int.min, Int.min + 1] {
            XCTAssertEqual(JSONSerializer.string(.int(integer)), String(integer))
        }
        XCTAssertEqual(JSONSerializer.string(.double(.nan)), "null")
        for text in ["3.141592653589793", "1e-07", "-0.5", "12345678901234567890"] {
            let parsed = try JSONParser.parse(text)
            XCTAssertEqual(try JSONParser.parse(JSONSerializer.string(parsed)), parsed, text)
        }
    }

    func testEscapesAndSurrogatePairs() throws {
        XCTAssertEqual(try JSONParser.parse(#""a\"b\\c\/d\b\f\n\r\t""#), .string("a\"b\\c/d\u{8}\u{c}\n\r\t"))
        XCTAssertEqual(try JSONParser.parse(#""\u00e9\u65e5\ud83d\ude00""#), .string("é日😀"))
        XCTAssertEqual(try JSONParser.parse("\"日本語 ✓\""), .string("日本語 ✓"))
        let tricky = Value.string("quote\" backslash\\ newline\n tab\t bell\u{7} 日本 😀")
        XCTAssertEqual(try JSONParser.parse(JSONSerializer.string(tricky)), tricky)
        XCTAssertEqual(JSONSerializer.string("\u{1}"), #""\u0001""#)
    }

    func testMalformedInputGivesTheByteOffset() {
        let cases: [(String, String, Int)] = [
            ("", "unexpected end of input", 0),
            ("{", "unexpected end of input in an object", 1),
            ("[1, 2", "unexpected end of input in an array", 5),
            ("[1 2]", "expected ',' or ']'", 3),
            (#"{"a" 1}"#, "expected ':'", 5),
            (#"{a: 1}"#, "expected a string key", 1),
            ("[1,]", "expected a value", 3),
            ("01", "leading zero", 0),
            ("1.", "expected a digit after '.'", 2),
            ("1e", "expected a digit in the exponent", 2),
            ("-", "expected a digit", 1),
            ("tru", "expected 'true'", 0),
            ("nul", "expected 'null'", 0),
            (#""abc"#, "unterminated string", 0),
            (#""a\x""#, "invalid escape", 2),
            (#""\ud83d""#, "unpaired high surrogate", 1),
            (#""\ude00""#, "unpaired low surrogate", 1),
            (#""\u12G4""#, "invalid hex digit", 5),
            ("\"a\u{1}\"", "unescaped control character", 2),
            ("[1] x", "after the JSON value", 4),
            ("'a'", "expected a value", 0),
        ]
        for (text, message, offset) in cases {
            XCTAssertThrowsError(try JSONParser.parse(text), text) { error in
                let jsonError = error as! JSONError
                XCTAssertTrue(jsonError.message.contains(message), "\(text): \(jsonError)")
                XCTAssertEqual(jsonError.offset, offset, "\(text): \(jsonError)")
            }
        }
    }

    func testInvalidUTF8IsRejected() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        XCTAssertThrowsError(try JSONParser.parse(bytes)) { XCTAssertTrue("\($0)".contains("invalid UTF-8")) }
    }

    func testNestingLimit() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        XCTAssertThrowsError(try JSONParser.parse(deep)) { XCTAssertTrue("\($0)".contains("nesting deeper than 512")) }
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        XCTAssertNoThrow(try JSONParser.parse(fine))
    }

    func testDuplicateKeysKeepTheLastAndObjectsKeepOrder() throws {
        let value = try JSONParser.parse(#"{"b": 1, "a": 2, "b": 3}"#)
        XCTAssertEqual(value.objectValue?.keys, ["b", "a"])
        XCTAssertEqual(value["b"], 3)
        var big = JSONObject()
        for index in 0..<40 { big["k\(index)"] = .int(index) }
        XCTAssertEqual(big["k37"], 37)
        big["k3"] = nil
        XCTAssertNil(big["k3"])
        XCTAssertEqual(big["k39"], 39)
        XCTAssertEqual(JSONSerializer.string(value), #"{"b":3,"a":2}"#)
        // Past the size where the parser keeps an index of the keys: a repeat still found.
        let members = (0..<30).map { #""k\#($0)": \#($0)"# } + [#""k5": "again""#, #""k29": null"#]
        let large = try JSONParser.parse("{" + members.joined(separator: ", ") + "}")
        XCTAssertEqual(large.objectValue?.count, 30)
        XCTAssertEqual(large["k5"], "again")
        XCTAssertEqual(large["k29"], .some(.null))
        XCTAssertEqual(large.objectValue?.keys.last, "k29")
    }

    func testPrettyPrinting() {
        let value: Value = ["a": [1, 2], "b": [:], "c": []]
        XCTAssertEqual(
            JSONSerializer.prettyString(value), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}")
    }
}
