import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// `YAMLDocument`, as a plugin sees it (no host-only import): a document's value, its first
/// problem located, and a plain scalar's type.
final class YAMLDocumentTests: LeakCheckingTestCase {
    func testADocumentIsItsValueAndAnEmptyOneIsNull() throws {
        let value = try YAMLDocument.value(of: "items:\n  - 1\n  - two\nok: true\n", file: "f.yaml")
        XCTAssertEqual(value["items"], Value.array([.int(1), .string("two")]))
        XCTAssertEqual(value["ok"], Value.bool(true))
        XCTAssertEqual(try YAMLDocument.value(of: "", file: "f.yaml"), .null)
    }

    func testABadDocumentNamesItsFileAndWhereItsFirstProblemIs() {
        XCTAssertThrowsError(try YAMLDocument.value(of: "a: [1, 2\n", file: "f.yaml")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("f.yaml:"), text)
            assertContains(text, "error")
        }
    }

    func testAPlainScalarIsTypedAsYAMLTypesIt() {
        XCTAssertEqual(YAMLDocument.plainScalar("12"), .int(12))
        XCTAssertEqual(YAMLDocument.plainScalar("true"), .bool(true))
        XCTAssertEqual(YAMLDocument.plainScalar("~"), .null)
        XCTAssertEqual(YAMLDocument.plainScalar("a"), .string("a"))
    }
}
