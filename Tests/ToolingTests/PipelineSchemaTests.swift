import Components
@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

@_spi(Host) @testable import Tooling

/// The schemas `rivulet schema` writes, as values: every component is in them, with its
/// parameters' types, defaults and choices.
final class PipelineSchemaTests: LeakCheckingTestCase {
    private let schema = PipelineSchema(registry: ComponentRegistry(registering: BuiltinComponents.all))

    func testEveryComponentIsAFormOfItsKind() throws {
        let file = schema.pipelineFile()
        XCTAssertEqual(file["$schema"], "http://json-schema.org/draft-07/schema#")
        let definitions = try XCTUnwrap(file["definitions"])
        // A mapping is checked against the component its key names: an `if` a component.
        let operators = try XCTUnwrap(definitions["operator"]?["else"]?["allOf"]?.arrayValue)
        let named = operators.compactMap { $0["if"]?["required"]?.arrayValue?.first?.stringValue }
        XCTAssertTrue(named.contains("debounce") && named.contains("flatMapLatest"), "\(named)")
        let bare = try XCTUnwrap(definitions["operator"]?["then"]?["enum"]?.arrayValue)
        XCTAssertTrue(bare.contains("distinctUntilChanged"), "an operator with no required parameter may be its name")
        let sinks = try XCTUnwrap(definitions["sinkItem"]?["anyOf"]?.arrayValue)
        XCTAssertTrue(sinks.allSatisfy { $0["required"]?.arrayValue?.first == "stream" })
    }

    func testAParameterCarriesItsTypeDefaultAndChoices() throws {
        let definitions = schema.pipelineFile()["definitions"]
        let operators = try XCTUnwrap(definitions?["operator"]?["else"]?["allOf"]?.arrayValue)
        let aggregate = try XCTUnwrap(
            operators.first { $0["if"]?["required"]?.arrayValue?.first == "aggregate" }?["then"])
        // Its parameters when a key names one (its short form, a map of fields, could be any mapping).
        let parameters = try XCTUnwrap(aggregate["properties"]?["aggregate"])
        XCTAssertEqual(parameters["if"]?["anyOf"]?.arrayValue?.first, ["required": ["by"]])
        let maxKeys = try XCTUnwrap(parameters["then"]?["properties"]?["maxKeys"])
        XCTAssertEqual(maxKeys["default"], 1_000_000)
        XCTAssertNotNil(maxKeys["description"]?.stringValue)
        let sources = try XCTUnwrap(definitions?["source"]?["else"]?["anyOf"]?.arrayValue?.first?["allOf"]?.arrayValue)
        let http = try XCTUnwrap(sources.first { $0["if"]?["required"]?.arrayValue?.first == "http" }?["then"])
        let emit = try XCTUnwrap(http["properties"]?["http"]?["then"]?["properties"]?["emit"])
        XCTAssertEqual(emit["anyOf"]?.arrayValue?.first?["enum"], ["items", "page", "all"])
    }

    func testTheTestFileSchemaNamesEveryCaseKey() throws {
        let properties = try XCTUnwrap(
            schema.testFile()["properties"]?["tests"]?["items"]?["properties"]?.objectValue)
        for key in PipelineTestFile.caseKeys { XCTAssertNotNil(properties[key], key) }
    }
}
