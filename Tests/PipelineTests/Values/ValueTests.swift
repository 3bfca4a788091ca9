@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// `JSONObject` is one reference shared by its copies until one is changed (copy on write).
final class ValueTests: LeakCheckingTestCase {
    func testAChangedCopyLeavesTheOriginalAlone() {
        let original: Value = ["a": 1, "b": ["c": 2]]
        var copy = original.objectValue!
        copy["a"] = 10
        copy["d"] = "new"
        copy["b"] = nil
        XCTAssertEqual(original, ["a": 1, "b": ["c": 2]])
        XCTAssertEqual(Value.object(copy), ["a": 10, "d": "new"])
        XCTAssertEqual(copy.keys, ["a", "d"])
    }

    func testEmptyObjectsShareNothingOnceChanged() {
        var first = JSONObject()
        var second = JSONObject()
        first["x"] = 1
        second.appendUnchecked("y", 2)
        XCTAssertEqual(first.keys, ["x"])
        XCTAssertEqual(second.keys, ["y"])
        XCTAssertTrue(JSONObject().isEmpty)
    }

    func testAnObjectReadOnDemandIsParsedWhenChangedAndItsCopiesStayAsRead() throws {
        let read = try Array(#"{"id": 7, "name": "seven"}"#.utf8).withUnsafeBufferPointer {
            try JSONParser.parseOnDemand($0)
        }
        var changed = read.objectValue!
        changed["id"] = 8
        XCTAssertEqual(read["id"], 7)
        XCTAssertEqual(changed["id"], 8)
        XCTAssertEqual(JSONSerializer.string(read), #"{"id":7,"name":"seven"}"#)
        XCTAssertEqual(JSONSerializer.string(.object(changed)), #"{"id":8,"name":"seven"}"#)
    }

    func testALargeObjectKeepsItsKeyIndexThroughCopiesAndChanges() {
        var large = JSONObject(distinctKeys: (0..<20).map { "k\($0)" }, values: (0..<20).map { .int($0) })
        let before = large
        large["k3"] = nil
        large.appendUnchecked("k20", 20)
        large["k19"] = "nineteen"
        XCTAssertEqual(before["k3"], 3)
        XCTAssertNil(large["k3"])
        XCTAssertEqual(large["k20"], 20)
        XCTAssertEqual(large["k19"], "nineteen")
        XCTAssertEqual(large["k4"], 4)
        XCTAssertEqual(large.count, 20)
        XCTAssertEqual(before.count, 20)
    }
}
