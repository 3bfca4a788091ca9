@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import RivuletTestSupport
import XCTest

@testable import Components
@_spi(Host) @_spi(Components) @testable import Pipeline

/// One aggregate's bounds on keys and bytes, shared by every copy of it (its partitions).
final class AggregateBudgetTests: LeakCheckingTestCase {
    func testAKeyPastEitherBoundIsRefusedAndReservesNothing() {
        let budget = AggregateBudget(maxKeys: 2, maxBytes: 1000)
        XCTAssertNil(budget.reserve(cost: 300))
        XCTAssertNil(budget.reserve(cost: 300))
        XCTAssertEqual(budget.reserve(cost: 10), "it holds 2 keys already (maxKeys)")
        XCTAssertEqual(budget.held.keys, 2)
        budget.release(keys: 1, bytes: 300)
        XCTAssertEqual(budget.reserve(cost: 800), "its keys take about 0 MiB already (maxMemoryMiB)")
        XCTAssertEqual(budget.held.keys, 1)
        XCTAssertEqual(budget.held.bytes, 300)
        budget.force(keys: 5, bytes: 5000)
        XCTAssertEqual(budget.held.keys, 6, "what a checkpoint held is held again")
    }

    func testAKeyCostsItsTextTwiceAndARowOfAccumulators() {
        XCTAssertEqual(AggregateBudget.cost(of: .string("abcd"), fields: 2), 2 * 4 + 128 + 128)
        XCTAssertEqual(AggregateBudget.cost(of: .int(7), fields: 1), 2 * 8 + 128 + 64)
    }

    func testTheCopiesOfOneAggregateShareItsBudgetAndOthersHaveTheirOwn() {
        let budgets = AggregateBudgets()
        let here = SourceLocation(file: "p.yaml", line: 3, column: 5)
        let there = SourceLocation(file: "p.yaml", line: 4, column: 5)
        let first = budgets.budget(for: here, maxKeys: 10, maxBytes: 100)
        XCTAssertTrue(first === budgets.budget(for: here, maxKeys: 10, maxBytes: 100))
        XCTAssertFalse(first === budgets.budget(for: there, maxKeys: 10, maxBytes: 100))
    }

    func testATableGivesBackWhatItReservedWhenEmptiedOrFreed() throws {
        let budget = AggregateBudget(maxKeys: 10, maxBytes: 1 << 20)
        let field = AggregateField(name: "n", kind: .count, expression: nil)
        let context = ComponentContext(
            scheduler: TestScheduler(), environment: ExpressionEnvironment(seed: 1), componentName: "aggregate",
            location: SourceLocation(file: "p.yaml", line: 1, column: 1), baseDirectory: "/tmp", log: { _ in },
            streamResolver: { _ in nil }, sourceBuilder: { _ in throw CancellationError() },
            chainBuilder: { _, _, _ in throw CancellationError() }, sideStreams: [:], services: SharedServices(),
            checkpointKey: "main#0 aggregate")
        let scope = context.makeScope()
        var table: AggregateTable? = AggregateTable(fields: [field], budget: budget)
        for key in ["a", "b", "a"] {
            try table?.add(.string(key), keyedBy: try Expression("."), scope: scope, context: context)
        }
        XCTAssertEqual(budget.held.keys, 2)
        table?.clear()
        XCTAssertEqual(budget.held.keys, 0)
        try table?.add(.string("c"), keyedBy: try Expression("."), scope: scope, context: context)
        XCTAssertEqual(budget.held.keys, 1)
        table = nil
        XCTAssertEqual(budget.held.keys, 0)
        XCTAssertEqual(budget.held.bytes, 0)
    }
}
