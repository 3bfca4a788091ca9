@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @_spi(Components) @testable import Pipeline

/// How the compiler makes a run watchable: each meter knows the one upstream of it (across a
/// stream that reads another), operators are metered only when asked, and a trace records every
/// event with its label.
final class CompileInstrumentationTests: LeakCheckingTestCase {
    private let fixtures = CompilerFixtures()
    private let scheduler = VirtualTimeScheduler(resolution: .milliseconds(1))

    private func instrumentation(meters: RunMeters?, tracer: ((TraceEvent) -> Void)? = nil) throws
        -> (CompileInstrumentation, ValidatedPipeline)
    {
        let loaded = fixtures.load("source: numbers\nops: [{ times: 2 }]\nsink: collect\n")
        let pipeline = try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
        return (
            CompileInstrumentation(pipeline: pipeline, scheduler: scheduler, meters: meters, tracer: tracer), pipeline
        )
    }

    func testEachMeterKnowsTheOneUpstreamOfIt() throws {
        let (instrumentation, pipeline) = try instrumentation(meters: RunMeters(metersOperators: true))
        let stream = try XCTUnwrap(pipeline.streams.first)
        let sourceSpec = try XCTUnwrap(
            pipeline.streams.first.flatMap {
                if case .component(let component) = $0.origin { component.spec } else { nil }
            })
        let source = try XCTUnwrap(instrumentation.meter(stream: "main", part: "source", sourceSpec, key: "s"))
        _ = instrumentation.metered(.just(1), stream: "main", source)
        let operation = try XCTUnwrap(
            instrumentation.meter(stream: "main", part: "ops.0", stream.operators[0].spec, key: "o"))
        XCTAssertTrue(operation.upstream === source)
        _ = instrumentation.metered(.just(1), stream: "main", operation)
        instrumentation.continues("copy", from: "main")
        let sink = try XCTUnwrap(
            instrumentation.sinkMeter(index: 0, stream: "copy", pipeline.sinks[0].component.spec, key: "k"))
        XCTAssertTrue(sink.upstream === operation, "a stream reading another starts where it ends")
        XCTAssertTrue(instrumentation.watchesOperators, "metered operators are watched one by one")
    }

    func testOperatorsAreMeteredOnlyWhenAsked() throws {
        let (instrumentation, pipeline) = try instrumentation(meters: RunMeters(metersOperators: false))
        XCTAssertNil(
            instrumentation.meter(stream: "main", part: "ops.0", pipeline.streams[0].operators[0].spec, key: ""))
        XCTAssertFalse(instrumentation.watchesOperators, "unwatched operators may be fused and run in parallel")
    }

    func testATraceRecordsEveryEventWithItsLabel() throws {
        var recorded: [String] = []
        let (instrumentation, _) = try instrumentation(meters: nil) { event in
            recorded.append("\(event.label) \(event.event)")
        }
        XCTAssertTrue(instrumentation.watchesOperators)
        let traced = instrumentation.traced(
            .of(1, 2), "main#0 times", SourceLocation(file: "p.yaml", line: 3, column: 5))
        traced.subscribe(AnyObserver { _ in }, in: Lifetime())
        XCTAssertEqual(recorded, ["main#0 times next(1)", "main#0 times next(2)", "main#0 times completed"])
    }
}
