@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@testable @_spi(Host) @_spi(Components) import Pipeline

final class JSONScannerTests: LeakCheckingTestCase {
    private func onDemand(_ text: String) throws -> Value {
        try Array(text.utf8).withUnsafeBufferPointer { bytes in try JSONParser.parseOnDemand(bytes) }
    }

    func testAnObjectIsKeptAsItsBytesAndReadsAsTheParsedOne() throws {
        let text = #"{"id": 7, "name": "item-7", "tags": ["a", "b"], "nested": {"x": 1.50}, "ok": true, "none": null}"#
        let lazy = try onDemand(text)
        XCTAssertNotNil(lazy.objectValue?.raw, "a plain object stays raw")
        let parsed = try JSONParser.parse(text)
        XCTAssertEqual(lazy, parsed)
        XCTAssertEqual(lazy.hashValue, parsed.hashValue)
        XCTAssertEqual(lazy["id"], 7)
        XCTAssertEqual(lazy["name"], "item-7")
        XCTAssertEqual(lazy["nested"], ["x": 1.5])
        XCTAssertNil(lazy["missing"])
        XCTAssertEqual(lazy.objectValue?.keys, ["id", "name", "tags", "nested", "ok", "none"])
        XCTAssertEqual(lazy.objectValue?.count, 6)
        XCTAssertEqual(Array(lazy.objectValue!.map(\.0)), parsed.objectValue!.keys)
    }

    /// A reader's scratch object is reused for the next line only when nobody holds the last one.
    func testAScratchObjectIsReusedOnlyOnceNobodyHoldsIt() throws {
        var scratch = JSONParser.Scratch()
        func parse(_ text: String) throws -> Value {
            try Array(text.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0, reusing: &scratch) }
        }
        let first = try parse(#"{"id": 1, "name": "one"}"#)
        let firstObject = ObjectIdentifier(try XCTUnwrap(first.objectValue?.raw))
        var second: Value? = try parse(#"{"id": 2, "name": "a longer second name", "more": [1, 2, 3]}"#)
        XCTAssertNotEqual(ObjectIdentifier(try XCTUnwrap(second?.objectValue?.raw)), firstObject, "the first is held")
        let secondObject = ObjectIdentifier(try XCTUnwrap(second?.objectValue?.raw))
        second = nil
        let third = try parse(#"{"id": 3, "name": "three, grown past what the second one took up"}"#)
        XCTAssertEqual(ObjectIdentifier(try XCTUnwrap(third.objectValue?.raw)), secondObject, "nobody held the second")
        XCTAssertEqual(first, ["id": 1, "name": "one"])
        XCTAssertEqual(third, ["id": 3, "name": "three, grown past what the second one took up"])
        XCTAssertEqual(
            JSONSerializer.string(third), #"{"id":3,"name":"three, grown past what the second one took up"}"#)
    }

    /// A lending scratch hands its object out with the value and takes it back: reused when the
    /// value given back was held by nobody else, never when it still is.
    func testALendingScratchReusesOnlyAnObjectGivenBackThatNobodyHolds() throws {
        var scratch = JSONParser.Scratch(lending: true)
        func parse(_ text: String) throws -> Value {
            try Array(text.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0, reusing: &scratch) }
        }
        let first = try parse(#"{"id": 1, "name": "one"}"#)
        let firstObject = ObjectIdentifier(try XCTUnwrap(first.objectValue?.raw))
        // Given back while `first` still holds it: not kept, so the next line cannot overwrite it.
        scratch.giveBack(first)
        let second = try parse(#"{"id": 2, "name": "a longer second name", "more": [1, 2, 3]}"#)
        let secondObject = ObjectIdentifier(try XCTUnwrap(second.objectValue?.raw))
        XCTAssertNotEqual(secondObject, firstObject, "the first is held")
        scratch.giveBack(consume second)
        let third = try parse(#"{"id": 3, "name": "three, grown past what the second one took up"}"#)
        XCTAssertEqual(ObjectIdentifier(try XCTUnwrap(third.objectValue?.raw)), secondObject, "nobody held the second")
        // Not given back: the next line gets an object of its own.
        let fourth = try parse(#"{"id": 4}"#)
        XCTAssertNotEqual(ObjectIdentifier(try XCTUnwrap(fourth.objectValue?.raw)), secondObject)
        scratch.giveBack(.string("not an object"))
        XCTAssertEqual(first, ["id": 1, "name": "one"])
        XCTAssertEqual(third, ["id": 3, "name": "three, grown past what the second one took up"])
        XCTAssertEqual(fourth, ["id": 4])
    }

    func testAnUnchangedObjectIsWrittenCompactWithItsNumbersAndStringsAsWritten() throws {
        let lazy = try onDemand(#"  { "price" : 1.50, "big": 1E3, "text": "caf\u00e9 \"x\"", "list": [ 1 , 2 ] }  "#)
        XCTAssertEqual(
            JSONSerializer.string(lazy), #"{"price":1.50,"big":1E3,"text":"caf\u00e9 \"x\"","list":[1,2]}"#)
        let compact = #"{"a":[1,{"b":"c d"}]}"#
        XCTAssertEqual(JSONSerializer.string(try onDemand(compact)), compact)
    }

    func testChangingAnObjectParsesItFirst() throws {
        var object = try onDemand(#"{"a": 1, "b": "two"}"#).objectValue!
        object["c"] = 3
        object["a"] = nil
        XCTAssertNil(object.raw)
        XCTAssertEqual(Value.object(object), ["b": "two", "c": 3])
        XCTAssertEqual(JSONSerializer.string(.object(object)), #"{"b":"two","c":3}"#)
        var appended = try onDemand(#"{"a": 1}"#).objectValue!
        appended.appendUnchecked("z", true)
        XCTAssertEqual(appended.keys, ["a", "z"])
    }

    func testEscapedOrDuplicateKeysAndOtherDocumentsAreParsedWhole() throws {
        XCTAssertNil(try onDemand(#"{"a\u0062": 1}"#).objectValue?.raw)
        XCTAssertEqual(try onDemand(#"{"a\u0062": 1}"#)["ab"], 1)
        let duplicate = try onDemand(#"{"b": 1, "a": 2, "b": 3}"#)
        XCTAssertNil(duplicate.objectValue?.raw)
        XCTAssertEqual(JSONSerializer.string(duplicate), #"{"b":3,"a":2}"#)
        let wide = "{" + (0..<70).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + "}"
        XCTAssertNil(try onDemand(wide).objectValue?.raw)
        XCTAssertEqual(try onDemand(wide)["k69"], 69)
        XCTAssertEqual(try onDemand("[1, 2]"), [1, 2])
        XCTAssertEqual(try onDemand(" 3 "), 3)
        XCTAssertEqual(try onDemand("{}"), [:])
        XCTAssertEqual(JSONSerializer.string(try onDemand("{ }")), "{}")
    }

    func testMalformedTextGivesTheSameErrorAsTheParser() {
        let cases = [
            "{", #"{"a" 1}"#, #"{a: 1}"#, #"{"a": [1,]}"#, #"{"a": 01}"#, #"{"a": 1.}"#, #"{"a": 1e}"#,
            #"{"a": -}"#, #"{"a": tru}"#, #"{"a": "abc}"#, #"{"a": "\x"}"#, #"{"a": "\ud83d"}"#,
            "{\"a\": \"\u{1}\"}", #"{"a": 1} x"#, #"{"a": 1 "b": 2}"#, #"{"a": {"b": [1 2]}}"#, #"{"a": 1,}"#,
            #"{"a": 'x'}"#, "{\"a\": " + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",
        ]
        for text in cases {
            let expected: JSONError
            do {
                _ = try JSONParser.parse(text)
                XCTFail("\(text) parsed")
                continue
            } catch { expected = error }
            XCTAssertThrowsError(try onDemand(text), text) { XCTAssertEqual($0 as? JSONError, expected, text) }
        }
        let invalidUTF8: [UInt8] = Array(#"{"a": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        XCTAssertThrowsError(try invalidUTF8.withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }) {
            XCTAssertTrue("\($0)".contains("invalid UTF-8"))
        }
    }

    /// Strings are checked eight bytes at a time: a quote, an escape, a control character or a
    /// longer character at every place of a word, and near the end of the text, reads or fails
    /// exactly as the parser does.
    func testAStringReadsAsTheParserReadsItWhereverItsSpecialBytesFall() throws {
        let specials: [[UInt8]] = [
            Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\n"#.utf8), [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80], [0x01],
            [0xC3, 0x28], Array(#"""#.utf8),
        ]
        for special in specials {
            for before in 0..<18 {
                for after in [0, 1, 7, 8, 9] {
                    let inside =
                        Array(repeating: UInt8(ascii: "a"), count: before) + special
                        + Array(repeating: UInt8(ascii: "b"), count: after)
                    let text: [UInt8] = Array(#"{"k": ""#.utf8) + inside + Array(#"", "n": 1}"#.utf8)
                    let label = String(decoding: text, as: UTF8.self)
                    let expected = Result { try text.withUnsafeBufferPointer { try JSONParser.parse($0) } }
                    let lazy = Result { try text.withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) } }
                    switch (expected, lazy) {
                    case (.success(let parsed), .success(let read)): XCTAssertEqual(read, parsed, label)
                    case (.failure(let parsed), .failure(let read)):
                        XCTAssertEqual(read as? JSONError, parsed as? JSONError, label)
                    default: XCTFail("\(label): parsed \(expected), read on demand \(lazy)")
                    }
                }
            }
        }
    }
}
