import RivuletTestSupport
import XCTest

@_spi(Host) @testable import Pipeline

/// The compiler's decisions as data, before anything is built: which operators are offered to a
/// source to run in parallel, which are fused, which stand alone, which streams are shared.
final class CompilePlanTests: LeakCheckingTestCase {
    private let fixtures = CompilerFixtures()

    private func plan(_ text: String, watched: Bool = false, cores: Int = 1) throws -> CompilePlan {
        let loaded = fixtures.load(text)
        let pipeline = try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
        return CompilePlan(pipeline, watchesOperators: watched, cores: cores)
    }

    func testAdjacentElementwiseOperatorsAreFusedAndOthersStandAlone() throws {
        let plan = try plan(
            "source: numbers\nops: [{ times: 2 }, { times: 3 }, held, { times: 4 }]\nsink: collect\n")
        let stream = try XCTUnwrap(plan.streams.first)
        XCTAssertEqual(stream.steps(from: 0), [.fused(0..<2), .alone(2), .fused(3..<4)])
        XCTAssertNil(stream.parallel, "one core, no parallel:")
        XCTAssertFalse(stream.isShared)
    }

    func testWatchedOperatorsStandAloneAndNoneIsOfferedToTheSource() throws {
        let plan = try plan(
            "parallel: 4\nsource: numbers\nops: [{ times: 2 }, { times: 3 }]\nsink: collect\n", watched: true,
            cores: 2)
        let stream = try XCTUnwrap(plan.streams.first)
        XCTAssertEqual(stream.steps(from: 0), [.alone(0), .alone(1)])
        XCTAssertNil(stream.parallel)
    }

    func testParallelOffersTheElementwisePrefixThatMayRunOnAnyThread() throws {
        let plan = try plan(
            "parallel: 4\nsource: numbers\nops: [{ times: 2 }, { times: 3 }, { sharedTimes: 2 }, { times: 5 }]\n"
                + "sink: collect\n")
        let stream = try XCTUnwrap(plan.streams.first)
        XCTAssertEqual(stream.parallel, CompilePlan.ParallelOffer(operators: 2, workers: 4))
        // Accepted, the source runs the first two; the rest are fused (sharedTimes is
        // element-wise, on the pipeline's thread). Declined, all four are fused.
        XCTAssertEqual(stream.steps(from: 2), [.fused(2..<4)])
        XCTAssertEqual(stream.steps(from: 0), [.fused(0..<4)])
    }

    func testWithoutParallelOneStreamOfSuchOperatorsUsesEveryCoreAndNothingElseDoes() throws {
        let all = try plan("source: numbers\nops: [{ times: 2 }, { times: 3 }]\nsink: collect\n", cores: 2)
        XCTAssertEqual(all.streams.first?.parallel, CompilePlan.ParallelOffer(operators: 2, workers: 2))
        let notAll = try plan("source: numbers\nops: [{ times: 2 }, held]\nsink: collect\n", cores: 2)
        XCTAssertNil(notAll.streams.first?.parallel, "an operator that is not element-wise follows")
        let capped = try plan("source: numbers\nops: [{ times: 2 }]\nsink: collect\n", cores: 200)
        XCTAssertEqual(capped.streams.first?.parallel?.workers, 64)
    }

    func testAnOperatorWhoseSideStreamIsReadStandsAloneAndEndsTheParallelPrefix() throws {
        let plan = try plan(
            """
            parallel: 2
            streams:
              main:
                source: numbers
                ops: [{ times: 2 }, { splitTimes: 3 }, { times: 4 }]
              odds:
                source: { stream: main.odd }
            sinks:
              - { stream: main, collect: main }
              - { stream: odds, collect: odds }

            """)
        let main = try XCTUnwrap(plan.streams.first { $0.name == "main" })
        XCTAssertEqual(main.steps(from: 0), [.fused(0..<1), .alone(1), .fused(2..<3)])
        XCTAssertEqual(main.parallel, CompilePlan.ParallelOffer(operators: 1, workers: 2))
        let odds = try XCTUnwrap(plan.streams.first { $0.name == "odds" })
        XCTAssertNil(odds.parallel, "it reads a stream, not a source")
    }

    func testAStreamWithSeveralReadersIsSharedAndStreamsAreInBuildOrder() throws {
        let plan = try plan(
            """
            streams:
              tens:
                source: { stream: base }
                ops: [{ times: 10 }]
              base:
                source: { numbers: 2 }
            sinks:
              - { stream: base, collect: base }
              - { stream: tens, collect: tens }

            """)
        XCTAssertEqual(plan.streams.map(\.name), ["base", "tens"])
        XCTAssertEqual(plan.streams.map(\.isShared), [true, false])
    }
}
