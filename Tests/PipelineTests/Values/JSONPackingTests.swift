import RivuletTestSupport
import XCTest

@testable @_spi(Host) import Pipeline

final class JSONPackingTests: LeakCheckingTestCase {
    private func onDemand(_ text: String) throws -> Value {
        try Array(text.utf8).withUnsafeBufferPointer { bytes in try JSONParser.parseOnDemand(bytes) }
    }

    /// Packs at the end of `buffer` (all of it content here).
    private func pack(_ value: Value, into buffer: inout [UInt8]) -> Int? {
        var end = buffer.count
        defer { buffer.removeSubrange(end...) }
        return JSONParser.pack(value, into: &buffer, end: &end)
    }

    private func unpack(_ offset: Int, _ buffer: [UInt8], _ scratch: inout JSONParser.Scratch) -> Value {
        buffer.withUnsafeBytes { JSONParser.unpack(at: offset, of: $0, reusing: &scratch) }
    }

    /// Objects read on demand come out equal, still kept as their bytes (written out as they were
    /// read, spacing and number forms included); anything else is not packed.
    func testObjectsReadOnDemandUnpackEqualAndOthersAreNotPacked() throws {
        let texts = [
            #"{"key": "k1", "v": 1.50, "ts": 0}"#, #"{}"#, #"{"a":[1,{"b":"c d"}],"n":null}"#,
            #"{"text": "caf\u00e9 \"x\"", "big": 1E3}"#,
        ]
        var buffer: [UInt8] = []
        var places: [Int] = []
        for text in texts { places.append(try XCTUnwrap(pack(try onDemand(text), into: &buffer), text)) }
        let size = buffer.count
        XCTAssertNil(pack(["built": 1], into: &buffer), "an object built in the pipeline goes as it is")
        XCTAssertNil(pack(.string("text"), into: &buffer))
        XCTAssertNil(pack(.int(3), into: &buffer))
        XCTAssertEqual(buffer.count, size, "nothing packed for them")
        var scratch = JSONParser.Scratch()
        for (text, place) in zip(texts, places) {
            let unpacked = unpack(place, buffer, &scratch)
            let read = try onDemand(text)
            XCTAssertEqual(unpacked, read)
            XCTAssertEqual(unpacked.hashValue, read.hashValue)
            XCTAssertNotNil(unpacked.objectValue?.raw, "still kept as its bytes")
            XCTAssertEqual(JSONSerializer.string(unpacked), JSONSerializer.string(read))
        }
    }

    /// The unpacking thread fills its scratch object again once nothing holds it, and makes a new
    /// one while something does.
    func testUnpackingReusesTheScratchObjectOnlyOnceNobodyHoldsIt() throws {
        var buffer: [UInt8] = []
        let first = try XCTUnwrap(pack(try onDemand(#"{"id": 1}"#), into: &buffer))
        let second = try XCTUnwrap(
            pack(try onDemand(#"{"id": 2, "name": "a longer second one"}"#), into: &buffer))
        var scratch = JSONParser.Scratch()
        let held = unpack(first, buffer, &scratch)
        let heldObject = ObjectIdentifier(try XCTUnwrap(held.objectValue?.raw))
        var next: Value? = unpack(second, buffer, &scratch)
        XCTAssertNotEqual(ObjectIdentifier(try XCTUnwrap(next?.objectValue?.raw)), heldObject)
        let nextObject = ObjectIdentifier(try XCTUnwrap(next?.objectValue?.raw))
        next = nil
        let again = unpack(first, buffer, &scratch)
        XCTAssertEqual(ObjectIdentifier(try XCTUnwrap(again.objectValue?.raw)), nextObject, "nobody held it")
        XCTAssertEqual(held, ["id": 1])
        XCTAssertEqual(again, ["id": 1])
    }

    /// An object too large to copy cheaply goes as it is.
    func testALargeObjectIsNotPacked() throws {
        let large = try onDemand(#"{"text": ""# + String(repeating: "x", count: JSONParser.largestPacked) + #""}"#)
        var buffer: [UInt8] = []
        XCTAssertNil(pack(large, into: &buffer))
        XCTAssertTrue(buffer.isEmpty)
    }

    /// A buffer filled again from the start keeps its room: what is packed over the old contents
    /// reads as itself, and the buffer does not grow for it.
    func testABufferFilledAgainWritesOverItsOldContents() throws {
        var buffer: [UInt8] = []
        var end = 0
        for text in [#"{"id": 1, "name": "first, and long enough to leave room"}"#, #"{"id": 2}"#] {
            _ = try XCTUnwrap(JSONParser.pack(try onDemand(text), into: &buffer, end: &end))
        }
        let room = buffer.count
        end = 0
        let again = try XCTUnwrap(JSONParser.pack(try onDemand(#"{"id": 3, "x": [1]}"#), into: &buffer, end: &end))
        XCTAssertEqual(again, 0)
        XCTAssertEqual(buffer.count, room, "no growth for what fits")
        var scratch = JSONParser.Scratch()
        XCTAssertEqual(unpack(again, buffer, &scratch), ["id": 3, "x": [1]])
    }
}
