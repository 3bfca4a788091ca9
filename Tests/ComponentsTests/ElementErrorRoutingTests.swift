import Components
@_spi(Host) import Pipeline
import Reactive
import RivuletTestSupport
import XCTest

/// `onError` on the operators whose expression can fail on one element, on the virtual clock:
/// the element is dropped (and reported under `errors`), the operator's state is untouched, and
/// the elements around it go on.
final class ElementErrorRoutingTests: LeakCheckingTestCase {
    /// 1, "x" (on which `. * 2` and friends fail), 3, then completion.
    let source =
        "source: { events: [{ at: 0ms, next: 1 }, { at: 10ms, next: x }, { at: 20ms, next: 3 }, { at: 30ms, complete: true }] }"

    private func run(_ op: String) throws -> PipelineHarness {
        try PipelineHarness().run(
            """
            streams:
              main:
                \(source)
                ops:
                  - \(op)
                    onError: errors
            sinks:
              - { stream: main, record: out }
              - { stream: main.errors, record: errors }
            """)
    }

    func testScanKeepsItsAccumulatedValueAcrossADroppedElement() throws {
        let harness = try run("scan: { seed: 0, accumulator: acc + . * 2 }")
        XCTAssertEqual(harness.events("out"), ["0: 2", "20: 8", "30: completed"])
        XCTAssertEqual(harness.events("errors").count, 2)
        XCTAssertTrue(
            harness.events("errors")[0].hasPrefix("10: {\"error\":\"cannot apply '*'"), "\(harness.events("errors"))")
    }

    func testReduceLeavesTheDroppedElementOut() throws {
        let harness = try run("reduce: { seed: 0, accumulator: acc + . * 2 }")
        XCTAssertEqual(harness.events("out"), ["30: 8", "30: completed"])
    }

    func testTakeWhileNeitherPassesNorStopsOnADroppedElement() throws {
        let harness = try run("takeWhile: . * 2 < 100")
        XCTAssertEqual(harness.events("out"), ["0: 1", "20: 3", "30: completed"])
        XCTAssertEqual(harness.events("errors").count, 2)
    }

    func testDedupeDropsAnElementWhoseKeyFails() throws {
        let harness = try run("dedupe: . * 2")
        XCTAssertEqual(harness.events("out"), ["0: 1", "20: 3", "30: completed"])
        XCTAssertTrue(harness.events("errors")[0].contains("\"element\":\"x\""), "\(harness.events("errors"))")
    }

    func testWithLatestFromReportsThePairItCouldNotCombine() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              other:
                source: { events: [{ at: 0ms, next: 5 }] }
              main:
                \(source)
                ops:
                  - withLatestFrom: { stream: other, combine: .value * .latest }
                    onError: errors
            sinks:
              - { stream: main, record: out }
              - { stream: main.errors, record: errors }
            """)
        XCTAssertEqual(harness.events("out"), ["0: 5", "20: 15", "30: completed"])
        XCTAssertTrue(
            harness.events("errors")[0].contains("\"element\":{\"value\":\"x\",\"latest\":5}"),
            "\(harness.events("errors"))")
    }

    func testUnderFailTheFirstBadElementStillFailsThePipeline() throws {
        let harness = try PipelineHarness().run(
            """
            \(source)
            ops:
              - scan: { seed: 0, accumulator: acc + . * 2 }
            sink: record
            """)
        XCTAssertEqual(harness.events().count, 2)
        guard case .failed? = harness.outcome else { return XCTFail("expected a failure") }
    }

    func testAggregateLeavesItsTableAsItWasWhenAFieldFails() throws {
        // 1 and 3 are summed; "x" fails `sum` after `n` would have counted it: nothing of it stays.
        let harness = try run("aggregate: { fields: { n: count, total: { sum: . } } }")
        XCTAssertEqual(harness.events("out"), ["30: {\"start\":0,\"n\":2,\"total\":4}", "30: completed"])
        XCTAssertTrue(
            harness.events("errors")[0].contains("sum of 'total' needs numbers"), "\(harness.events("errors"))")
    }

    func testGroupByDropsAnElementWhoseKeyFails() throws {
        let harness = try run("groupBy: { key: . * 2, ops: [{ map: . + 100 }] }")
        XCTAssertEqual(harness.events("out"), ["0: 101", "20: 103", "30: completed"])
        XCTAssertEqual(harness.events("errors").count, 2)
    }
}
