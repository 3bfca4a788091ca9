@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@testable @_spi(Host) @_spi(Components) import Pipeline

final class RawObjectTests: LeakCheckingTestCase {
    private func raw(_ text: String) throws -> RawObject {
        let value = try Array(text.utf8).withUnsafeBufferPointer { bytes in try JSONParser.parseOnDemand(bytes) }
        return try XCTUnwrap(value.objectValue?.raw, text)
    }

    func testReadsAPathWithoutParsingWhatLiesAround() throws {
        let object = try raw(#"{"a": {"b": {"c": [1, {"d": 2}]}, "x": "y"}, "n": null, "s": "text"}"#)
        XCTAssertEqual(object.value(atPath: ["a", "b", "c"]), [1, ["d": 2]])
        XCTAssertEqual(object.value(atPath: ["a", "x"]), "y")
        XCTAssertEqual(object.value(atPath: ["a", "missing"]), .null)
        XCTAssertEqual(object.value(atPath: ["missing", "b"]), .null)
        XCTAssertEqual(object.value(atPath: ["n", "b"]), .null)
        XCTAssertNil(object.value(atPath: ["s", "b"]), "a string has no fields: the caller reports it")
        XCTAssertNil(object.value(atPath: ["a", "b", "c", "d"]), "a list has no fields either")
    }

    func testAPathKeepsTheLastOfDuplicateKeysAndLeavesEscapedKeysToTheParser() throws {
        let object = try raw(#"{"a": {"k": 1, "k": 2}, "e": {"\u006b": 3}}"#)
        XCTAssertEqual(object.value(atPath: ["a", "k"]), 2)
        XCTAssertNil(object.value(atPath: ["e", "k"]))
    }

    func testAnIntegerMemberIsReadFromItsTextOnlyWhenWrittenPlainly() throws {
        let object = try raw(
            #"{"a": 2500, "b": -17, "c": 0, "d": 2.5, "e": 1e3, "f": 1234567890123456789, "g": "7", "h": null}"#)
        XCTAssertEqual(object.integer(ofMember: "a"), 2500)
        XCTAssertEqual(object.integer(ofMember: "b"), -17)
        XCTAssertEqual(object.integer(ofMember: "c"), 0)
        for key in ["d", "e", "f", "g", "h", "missing"] {
            XCTAssertNil(object.integer(ofMember: key), "\(key): left to the parser")
        }
    }

    /// Integers are read eight digits at a time from the word that ends with them: every length
    /// from 1 to 18 digits, signed or not, near the line's start (too near for a whole word before
    /// it) and far from it, reads as the digit-at-a-time way and the parser read it; a byte that is
    /// not a digit anywhere in the word is never taken for one.
    func testAnIntegerReadsTheSameAtEveryLengthAndPlaceInTheLine() throws {
        var generator = SystemRandomNumberGenerator()
        for digits in 1...18 {
            for _ in 0..<50 {
                let magnitude = (0..<digits).map { place in
                    String(place == 0 && digits > 1 ? Int.random(in: 1...9, using: &generator) : Int.random(in: 0...9))
                }.joined()
                for sign in ["", "-"] {
                    for padding in ["", "      ", String(repeating: " ", count: 17)] {
                        let text = #"{"t":"# + padding + sign + magnitude + #", "x": 1.5e3}"#
                        let object = try raw(text)
                        let expected = Int(sign + magnitude)
                        XCTAssertEqual(object.integer(ofMember: "t"), expected, text)
                        let oneByOne = Array((sign + magnitude).utf8).withUnsafeBufferPointer(RawObject.plainInteger)
                        XCTAssertEqual(oneByOne, expected, text)
                        XCTAssertEqual(try JSONParser.parse(text)["t"], expected.map(Value.int), text)
                        XCTAssertNil(object.integer(ofMember: "x"), "1.5e3: left to the parser")
                    }
                }
            }
        }
        for text in [#"{"t": 12.5}"#, #"{"t": 1e9}"#, #"{"t": 123456789.25}"#, #"{"t": -1.0}"#, #"{"t": "12"}"#] {
            XCTAssertNil(try raw(text).integer(ofMember: "t"), text)
        }
    }

    /// Plain integers are computed from their text at once, others parsed: both read as the parser
    /// reads them, at the edges of the short way too.
    func testEveryNumberMemberReadsAsTheParserReadsIt() throws {
        let text =
            #"{"a": 0, "b": -0, "c": 7, "d": -7, "e": 999999999999999999, "f": -999999999999999999, "#
            + #""g": 1000000000000000000, "h": -9223372036854775808, "i": 9223372036854775808, "j": 2.5, "#
            + #""k": -1e3, "l": 1700000000123}"#
        let lazy = try Array(text.utf8).withUnsafeBufferPointer { bytes in try JSONParser.parseOnDemand(bytes) }
        let parsed = try JSONParser.parse(text)
        for key in parsed.objectValue!.keys {
            XCTAssertEqual(lazy[key], parsed[key], key)
            XCTAssertEqual(lazy[key].map(\.typeName), parsed[key].map(\.typeName), key)
        }
        XCTAssertEqual(lazy["e"], .int(999_999_999_999_999_999))
        XCTAssertEqual(lazy["l"], .int(1_700_000_000_123))
    }

    func testAScopeReadsTheMembersOfWhicheverElementItHoldsNow() throws {
        let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 1))
        let stars = try Expression(".stars >= 2500")
        let name = try Expression(".name")
        let line = #"{"stars": 2600, "name": "raw"}"#
        let onDemand = try Array(line.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
        XCTAssertNotNil(onDemand.objectValue?.raw)
        for (element, expected) in [
            (onDemand, ["true", "\"raw\""]), (["stars": 10, "name": "parsed"], ["false", "\"parsed\""]),
            (onDemand, ["true", "\"raw\""]), (.null, ["error", "null"]),
        ] as [(Value, [String])] {
            scope.element = element
            let tested = (try? stars.evaluate(in: scope)).map { "\($0)" } ?? "error"
            XCTAssertEqual([tested, "\(try name.evaluate(in: scope))"], expected, "\(element)")
        }
        scope.element = onDemand
        XCTAssertEqual(scope.takeElement(), onDemand)
        XCTAssertEqual(try name.evaluate(in: scope), .null, "the element was taken")
    }

    func testAProjectionCopiesTheMembersText() throws {
        let object = try raw(
            #"{ "id": 12345678901234567890, "name": "caf\u00e9", "stars": 1.50, "tags": [ "a" , "b" ] }"#)
        let shape = try XCTUnwrap(
            ProjectionShape(
                keys: ["id", "title", "tags", "gone", "日本"], sources: ["id", "name", "tags", "gone", "stars"]))
        let projected = object.projecting(shape)
        XCTAssertTrue(projected.isCompact)
        let text = JSONSerializer.string(.object(JSONObject(raw: projected)))
        XCTAssertEqual(
            text, #"{"id":12345678901234567890,"title":"caf\u00e9","tags":["a","b"],"gone":null,"日本":1.50}"#)
        XCTAssertEqual(try JSONParser.parse(text), Value.object(JSONObject(raw: projected)))
        XCTAssertEqual(Value.object(JSONObject(raw: projected))["tags"], ["a", "b"])
        XCTAssertNil(
            ProjectionShape(keys: ["quote\"d"], sources: ["id"]), "a key written with an escape is not projected")
    }

    func testAnObjectOfFieldsAndComputedValuesReadsAsTheOneBuiltFromValues() throws {
        let text = #"{"id": 7, "name": "n", "stars": 3, "big": 1e308, "tags": [1, 2]}"#
        let lazy = try Array(text.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
        let parsed = try JSONParser.parse(text)
        XCTAssertNotNil(lazy.objectValue?.raw)
        let members: [(String, Pipeline.Expression)] = [
            ("id", try Expression(".id")), ("twice", try Expression(".stars * 2")),
            ("label", try Expression("upper(.name)")),
            ("tags", try Expression(".tags")), ("size", try Expression("len(.tags)")),
        ]
        let expression = Expression.object(members)
        let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 1))
        let fromRaw = try expression.evaluate(lazy, in: scope)
        XCTAssertNotNil(fromRaw.objectValue?.raw, "built as text")
        XCTAssertEqual(fromRaw, try expression.evaluate(parsed, in: scope))
        XCTAssertEqual(JSONSerializer.string(fromRaw), #"{"id":7,"twice":6,"label":"N","tags":[1,2],"size":2}"#)
        // A value with no JSON form (infinity) is kept as a value, as from a parsed element.
        let overflowing = Expression.object([("id", try Expression(".id")), ("x", try Expression(".big * 10"))])
        let infinite = try overflowing.evaluate(lazy, in: scope)
        XCTAssertNil(infinite.objectValue?.raw)
        XCTAssertEqual(infinite["x"]?.doubleValue, .infinity)
        XCTAssertEqual(infinite["id"], 7)
    }

    func testCompactCopyLeavesStringsAlone() {
        let text = Array(#" [ "a b" , { "c" : "\" d" } ] "#.utf8)
        var output: [UInt8] = []
        text.withUnsafeBufferPointer { bytes in
            XCTAssertEqual(RawObject.copyCompact(bytes, to: nil), #"["a b",{"c":"\" d"}]"#.utf8.count)
            output = [UInt8](repeating: 0, count: bytes.count)
            let written = output.withUnsafeMutableBufferPointer { RawObject.copyCompact(bytes, to: $0.baseAddress!) }
            output.removeLast(output.count - written)
        }
        XCTAssertEqual(String(decoding: output, as: UTF8.self), #"["a b",{"c":"\" d"}]"#)
    }
}
