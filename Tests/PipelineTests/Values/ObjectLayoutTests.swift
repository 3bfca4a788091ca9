import RivuletTestSupport
import XCTest

@testable @_spi(Host) @_spi(Components) import Pipeline

final class ObjectLayoutTests: LeakCheckingTestCase {
    private func written(_ value: Value) -> String {
        var bytes: [UInt8] = []
        JSONSerializer.write(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What the same names and values make as an object of values.
    private func ofValues(_ names: [String], _ values: [Value]) -> Value {
        .object(JSONObject(distinctKeys: names, values: values))
    }

    func testAnObjectIsMadeAsItsTextAndReadsAsTheObjectOfItsValues() throws {
        let names = ["key", "start", "count", "sum", "avg", "last", "none", "flag"]
        let layout = ObjectLayout(names: names)
        var scratch: [UInt8] = []
        let rows: [[Value]] = [
            ["k7919", 60_000, 10, 415, 41.5, "caf\u{e9} \"quoted\"\n", .null, true],
            [.string(""), -1, .int(.max), .int(.min), 0.1, [1, ["a": 2.5]], ["nested": [true, .null]], false],
            ["\u{1F600}\\", 0, 0, 1e300, -2.0, "", 5e-324, .string(String(repeating: "x", count: 300))],
        ]
        for values in rows {
            let made = layout.object(values, scratch: &scratch)
            let object = try XCTUnwrap(made.objectValue)
            XCTAssertNotNil(object.raw, "made as its text: \(values)")
            XCTAssertEqual(made, ofValues(names, values))
            XCTAssertEqual(written(made), written(ofValues(names, values)), "the same bytes out")
            XCTAssertEqual(object.keys, names)
            for (name, value) in zip(names, values) {
                XCTAssertEqual(object[name], value, name)
            }
            XCTAssertEqual(made.hashValue, ofValues(names, values).hashValue)
        }
    }

    func testTheScratchRoomIsNotPartOfTheNextObject() throws {
        let layout = ObjectLayout(names: ["a"])
        var scratch: [UInt8] = []
        let long = layout.object([.string(String(repeating: "y", count: 100))], scratch: &scratch)
        let short = layout.object([1], scratch: &scratch)
        XCTAssertEqual(written(short), #"{"a":1}"#)
        XCTAssertEqual(written(long), #"{"a":"\#(String(repeating: "y", count: 100))"}"#)
    }

    func testANumberJSONCannotWriteMakesAnObjectOfValues() throws {
        let layout = ObjectLayout(names: ["a", "b"])
        var scratch: [UInt8] = []
        for value: Value in [.double(.nan), .double(.infinity), [1, .double(-.infinity)], ["x": .double(.nan)]] {
            let made = layout.object([1, value], scratch: &scratch)
            let object = try XCTUnwrap(made.objectValue)
            XCTAssertNil(object.raw, "\(value)")
            XCTAssertEqual(object.keys, ["a", "b"])
            XCTAssertEqual(written(made), written(ofValues(["a", "b"], [1, value])))
        }
    }

    func testNamesARawObjectCannotHoldMakeObjectsOfValues() throws {
        var scratch: [UInt8] = []
        let escaped = ["with \"quote\"", "back\\slash", "line\nbreak", "tab\t"]
        for name in escaped {
            let made = ObjectLayout(names: ["a", name]).object([1, 2], scratch: &scratch)
            XCTAssertNil(made.objectValue?.raw, name)
            XCTAssertEqual(made, ofValues(["a", name], [1, 2]))
        }
        // Text beyond ASCII needs no escape: such a name is kept as its UTF-8 bytes, as a line's is.
        let accented = ObjectLayout(names: ["a", "caf\u{e9}"]).object([1, 2], scratch: &scratch)
        XCTAssertNotNil(accented.objectValue?.raw)
        XCTAssertEqual(accented.objectValue?["caf\u{e9}"], 2)
        let many = (0..<65).map { "m\($0)" }
        let wide = ObjectLayout(names: many).object(many.indices.map { .int($0) }, scratch: &scratch)
        XCTAssertNil(wide.objectValue?.raw, "more than 64 members")
        XCTAssertEqual(wide.objectValue?["m64"], 64)
        let sixtyFour = Array(many.prefix(64))
        let widest = ObjectLayout(names: sixtyFour).object(sixtyFour.indices.map { .int($0) }, scratch: &scratch)
        XCTAssertNotNil(widest.objectValue?.raw, "64 members")
        XCTAssertEqual(widest, ofValues(sixtyFour, sixtyFour.indices.map { .int($0) }))
    }

    func testAChangedObjectKeepsItsOtherMembers() throws {
        var scratch: [UInt8] = []
        var made = ObjectLayout(names: ["key", "count"]).object(["k1", 3], scratch: &scratch)
        guard case .object(var object) = made else { return XCTFail("not an object") }
        object["count"] = 4
        object["extra"] = "e"
        made = .object(object)
        XCTAssertEqual(written(made), #"{"key":"k1","count":4,"extra":"e"}"#)
    }
}
