@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @_spi(Components) @testable import Pipeline

/// What components are built with: streams found by name until the compiler is done, contexts
/// on the run's clock or a stream's own.
final class ComponentContextsTests: LeakCheckingTestCase {
    private let fixtures = CompilerFixtures()
    private let scheduler = VirtualTimeScheduler(resolution: .milliseconds(1))

    private func contexts(_ text: String) throws -> ComponentContexts {
        let loaded = fixtures.load(text)
        let pipeline = try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
        return ComponentContexts(
            pipeline: pipeline, scheduler: scheduler,
            environment: ExpressionEnvironment(seed: 1, clock: { [scheduler] in scheduler.now }), baseDirectory: ".",
            log: { _ in }, services: SharedServices())
    }

    func testAStreamIsFoundByNameUntilTheStreamsAreDropped() throws {
        let contexts = try contexts("source: numbers\nsink: collect\n")
        XCTAssertNil(contexts.resolve("main"), "not built yet")
        contexts.add(.just(1), named: "main")
        XCTAssertNotNil(contexts.resolve("main"))
        let streams = contexts.dropStreams()
        XCTAssertEqual(Array(streams.keys), ["main"])
        XCTAssertNil(contexts.resolve("main"), "dropped: nothing built is held once the compiler is done")
    }

    func testAContextRunsOnTheRunsClockUnlessGivenAStreamsOwn() throws {
        let contexts = try contexts("source: numbers\nops: [{ times: 2 }]\nsink: collect\n")
        let component = try XCTUnwrap(contexts.pipeline.streams.first?.operators.first)
        let plain = contexts.context(for: component, key: "main#0", sides: [:])
        XCTAssertTrue(plain.scheduler as AnyObject === scheduler)
        XCTAssertEqual(plain.componentName, "times")
        let other = VirtualTimeScheduler(resolution: .milliseconds(1))
        let onItsOwn = contexts.context(for: component, key: "main#0", sides: [:], clock: other)
        XCTAssertTrue(onItsOwn.scheduler as AnyObject === other)
    }

    func testAChainBuiltForAContextAppliesItsOperatorsInOrder() throws {
        let contexts = try contexts("source: numbers\nops: [{ times: 2 }, { times: 5 }]\nsink: collect\n")
        let operators = try XCTUnwrap(contexts.pipeline.streams.first?.operators)
        let chain = try contexts.buildChain(
            ParameterValues.OperatorChain(operators: operators, location: operators[0].use.location), meterKey: "",
            keyPrefix: "", clock: scheduler,
            services: contexts.services)
        var seen: [Value] = []
        chain(.of(1, 2)).subscribe(
            AnyObserver { event in if case .next(let value) = event { seen.append(value) } }, in: Lifetime())
        XCTAssertEqual(seen, [10, 20])
    }
}
