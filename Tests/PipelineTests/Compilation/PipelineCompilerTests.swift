@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// The compiler's passes on their own: a stream built and run on a virtual clock, element-wise
/// operators fused, a stream with two readers subscribed to once, sinks closed at the end.
final class PipelineCompilerTests: LeakCheckingTestCase {
    private let fixtures = CompilerFixtures()

    private func run(_ text: String) throws -> PipelineRun.Outcome? {
        let loaded = fixtures.load(text)
        let pipeline = try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
        let scheduler = VirtualTimeScheduler(resolution: .milliseconds(1))
        let compiled = try PipelineCompiler.compile(
            pipeline, scheduler: scheduler, environment: ExpressionEnvironment(seed: 1, clock: { scheduler.now }),
            baseDirectory: ".", log: { _ in })
        var outcome: PipelineRun.Outcome?
        let run = compiled.start { outcome = $0 }
        scheduler.advance(to: 1_000)
        if outcome == nil { run.dispose() }
        return outcome
    }

    func testAStreamRunsItsOperatorsInOrderAndTheSinkIsClosedOnce() throws {
        let outcome = try run("source: { numbers: 3 }\nops: [{ times: 2 }, { times: 5 }]\nsink: { collect: out }\n")
        XCTAssertEqual(outcome.map { "\($0)" }, "completed")
        let collector = try XCTUnwrap(fixtures.collectors["out"])
        XCTAssertEqual(collector.values, [10, 20, 30])
        XCTAssertEqual(collector.closed, 1)
    }

    func testAStreamWithTwoReadersIsSubscribedToOnce() throws {
        _ = try run(
            """
            streams:
              base:
                source: { numbers: 2 }
              tens:
                source: { stream: base }
                ops: [{ times: 10 }]
            sinks:
              - { stream: base, collect: base }
              - { stream: tens, collect: tens }

            """)
        XCTAssertEqual(fixtures.subscriptions, 1, "one subscription upstream, multicast to both readers")
        XCTAssertEqual(fixtures.collectors["base"]?.values, [1, 2])
        XCTAssertEqual(fixtures.collectors["tens"]?.values, [10, 20])
    }

    func testRunsInParallelOnlyWhatDeclaresItKeepsOnlyItsOwnState() throws {
        let loaded = fixtures.load("source: numbers\nops: [{ times: 2 }]\nsink: collect\n")
        let pipeline = try XCTUnwrap(loaded.pipeline)
        let times = try XCTUnwrap(pipeline.streams.first?.operators.first)
        // An element-wise component keeps nothing between elements: by default it may.
        XCTAssertEqual(times.spec.threading, .ownStateOnly)
        XCTAssertTrue(PipelineCompiler.runsInParallel(times))
        // One that says it needs the pipeline's thread (a service it shares) may not.
        let shared = try XCTUnwrap(
            fixtures.load("source: numbers\nops: [{ sharedTimes: 2 }]\nsink: collect\n").pipeline?.streams.first?
                .operators.first)
        XCTAssertEqual(shared.spec.threading, .pipelineThread)
        XCTAssertFalse(PipelineCompiler.runsInParallel(shared))
    }

    /// An expression that reads the clock or random numbers keeps its operator on the pipeline's
    /// thread wherever it sits among the parameters: alone, in a list, in a mapping.
    func testAnImpureExpressionInsideAListOrAMappingKeepsTheOperatorOnThePipelinesThread() throws {
        let times = try XCTUnwrap(
            fixtures.load("source: numbers\nops: [{ times: 2 }]\nsink: collect\n").pipeline?.streams.first?.operators
                .first)
        func with(_ values: [String: Any]) -> ValidatedComponent {
            ValidatedComponent(use: times.use, spec: times.spec, parameters: ParameterValues(values: values))
        }
        let pure = try Pipeline.Expression(".v * 2")
        let impure = try Pipeline.Expression("now()")
        // A mapping with free keys is checked as `[(String, Any)]`, as the validator makes it.
        let pureMapping: [(String, Any)] = [("x", pure)]
        let impureMapping: [(String, Any)] = [("x", pure), ("y", impure)]
        XCTAssertTrue(PipelineCompiler.runsInParallel(with(["a": pure, "b": [pure], "c": pureMapping])))
        XCTAssertFalse(PipelineCompiler.runsInParallel(with(["a": impure])))
        XCTAssertFalse(PipelineCompiler.runsInParallel(with(["b": [pure, impure]])))
        XCTAssertFalse(PipelineCompiler.runsInParallel(with(["c": impureMapping])))
        XCTAssertFalse(PipelineCompiler.runsInParallel(with(["d": ParameterValues(values: ["e": [impure]])])))
    }

    func testOtherOperatorsRunOnThePipelinesThreadUnlessTheyDeclareOtherwise() {
        let held = ComponentSpec(
            name: "held", summary: "Holds.", example: "- held", factory: .operator { _, _ in { $0 } })
        XCTAssertEqual(held.threading, .pipelineThread)
        XCTAssertEqual(held.runningOnAnyThread().threading, .ownStateOnly)
        XCTAssertEqual(held.keepingState(of: []).runningOnAnyThread().name, "held")
    }
}
