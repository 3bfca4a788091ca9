@_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// What a component declares of itself (`ComponentTraits`), as the planner reads it: partitioning
/// from its factory unless declared, and keyed by a parameter as written.
final class ComponentTraitsTests: LeakCheckingTestCase {
    private static let key = Parameter<Pipeline.Expression?>("key", doc: "The key.")
    private static let required = Parameter<Pipeline.Expression>("by", doc: "The key.")

    private func spec(_ factory: ComponentFactory) -> ComponentSpec {
        ComponentSpec(name: "x", summary: "x", parameters: [Self.key, Self.required], example: "- x", factory: factory)
    }

    private func describe(_ partitioning: Partitioning) -> String {
        switch partitioning {
        case .anyKey: return "any key"
        case .wholeStream: return "whole stream"
        case .keyed(let expression, let parameter): return "keyed by \(parameter) \(expression.source)"
        }
    }

    func testAnElementWiseOperatorTakesAnyKeyAndAnyOtherNeedsTheWholeStreamUnlessItDeclares() throws {
        let values = ParameterValues(values: [:])
        XCTAssertEqual(describe(spec(.elementwise { _, _ in { { $0 } } }).partitioning(values)), "any key")
        XCTAssertEqual(describe(spec(.operator { _, _ in { $0 } }).partitioning(values)), "whole stream")
        let declared = spec(.operator { _, _ in { $0 } }).declaring { $0.partitioning = { _ in .anyKey } }
        XCTAssertEqual(describe(declared.partitioning(values)), "any key")
    }

    func testKeyedByAParameterReadsItsValueAsWrittenAndFallsBackWhereItIsNotGiven() throws {
        let optional = spec(.operator { _, _ in { $0 } }).declaring { $0.keyed(by: Self.key, otherwise: .anyKey) }
        let user = try Pipeline.Expression(".user")
        XCTAssertEqual(describe(optional.partitioning(ParameterValues(values: ["key": user]))), "keyed by key .user")
        XCTAssertEqual(describe(optional.partitioning(ParameterValues(values: [:]))), "any key")
        let required = spec(.operator { _, _ in { $0 } }).declaring { $0.keyed(by: Self.required) }
        XCTAssertEqual(describe(required.partitioning(ParameterValues(values: ["by": user]))), "keyed by by .user")
    }

    func testTheOtherTraitsSayNothingUntilDeclared() {
        let traits = spec(.operator { _, _ in { $0 } }).traits
        let values = ParameterValues(values: [:])
        XCTAssertEqual(traits.splitOrder(values), .never)
        XCTAssertFalse(traits.splitsByDefault || traits.startsEventTime || traits.holdsUntilCompletion)
        XCTAssertFalse(traits.awaitsAcknowledgement(values) || traits.takesEventTimeAsItComes(values))
        XCTAssertFalse(traits.setsOrigins(values))
        XCTAssertNil(traits.groupPartitions(values))
        XCTAssertNil(traits.partitions)
        XCTAssertTrue(traits.builtExpressionsArePure(values))
        XCTAssertFalse(traits.runsUnderTests)
        XCTAssertEqual(traits.innerRun, "each run")
    }
}
