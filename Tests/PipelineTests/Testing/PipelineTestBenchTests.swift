import Foundation
import PipelineTesting
import PluginAPI
import RivuletTestSupport
import XCTest

/// The bench a plugin's tests run on: components registered directly or through a plugin's
/// entry point, pipelines checked as `rivulet lint` does, run on a virtual clock to their end or
/// a limit, and everything the `record` sink received kept with its time.
final class PipelineTestBenchTests: LeakCheckingTestCase {
    /// `double`: an operator of the test's own, as a plugin declares one.
    private static let double = ComponentSpec(
        name: "double", summary: "Doubles numbers.", example: "- double",
        factory: .operator { _, _ in { $0.map { .int(($0.intValue ?? 0) * 2) } } })

    /// `explode`: fails the run at its first element.
    private static let explode = ComponentSpec(
        name: "explode", summary: "Fails.", example: "- explode",
        factory: .operator { _, context in
            { $0.map { _ in throw context.error("exploded") } }
        })

    func testARunKeepsEachElementWithItsVirtualTimeAndHowItEnded() throws {
        let bench = try PipelineTestBench(components: [Self.double])
        let run = try bench.run(
            """
            source: { events: { marbles: "1-2--3|" } }
            ops: [double]
            sink: record
            """)
        XCTAssertEqual(run.values, [2, 4, 6])
        XCTAssertEqual(run.timedValues.map(\.milliseconds), [0, 20, 50])
        XCTAssertEqual(run.outcome, .completed)
        guard case .completed? = run.events.last?.event else { return XCTFail("\(run.events)") }
        XCTAssertEqual(run.events.last?.at, .milliseconds(60))
    }

    /// `say`: logs each element it passes, through the component context.
    private static let say = ComponentSpec(
        name: "say", summary: "Logs.", example: "- say",
        factory: .operator { _, context in
            { $0.do(onNext: { context.log("saw \($0)") }) }
        })

    func testWhatComponentsLogIsKept() throws {
        let bench = try PipelineTestBench(components: [Self.say])
        let run = try bench.run("source: { events: { marbles: \"ab|\" } }\nops: [say]\nsink: record\n")
        XCTAssertEqual(run.logged, ["saw \"a\"", "saw \"b\""])
    }

    func testAnErrorFailsTheRunAndALimitStopsAnOpenOne() throws {
        let bench = try PipelineTestBench(components: [Self.double, Self.explode])
        let failed = try bench.run("source: { events: { marbles: \"a\" } }\nops: [explode]\nsink: record\n")
        guard case .failed(let message) = failed.outcome else { return XCTFail("\(failed.outcome)") }
        assertContains(message, "exploded")
        // Without a completion the timeline stays open: the limit stops the run.
        let open = try bench.run(
            "source: { events: { marbles: \"1-2-3\" } }\nops: [double]\nsink: record\n", until: .milliseconds(25))
        XCTAssertEqual(open.values, [2, 4])
        XCTAssertEqual(open.outcome, .stopped)
    }

    private enum RollKey {
        static let expression = Parameter<Pipeline.Expression>.valueExpression(
            "expression", doc: "What each element becomes.", example: "random(1, 6)")
    }

    /// `roll: EXPR`: each element becomes what `EXPR` gives (here a throw of a die).
    private static let roll = ComponentSpec(
        name: "roll", summary: "Evaluates an expression.", parameters: [RollKey.expression],
        primary: RollKey.expression, example: "- roll: random(1, 6)",
        factory: .operator { parameters, context in
            let expression = parameters[RollKey.expression]
            return { source in
                let scope = context.makeScope()
                return source.map { try context.evaluate(expression, $0, in: scope) }
            }
        })

    func testTheSeedDecidesTheRandomNumbers() throws {
        let bench = try PipelineTestBench(components: [Self.roll])
        let pipeline =
            "source: { events: { marbles: \"abcdefghij|\" } }\nops: [{ roll: \"random(1, 1000)\" }]\nsink: record\n"
        let first = try bench.run(pipeline, seed: 7).values
        XCTAssertEqual(first.count, 10)
        XCTAssertEqual(try bench.run(pipeline, seed: 7).values, first, "the same seed, the same numbers")
        XCTAssertNotEqual(try bench.run(pipeline, seed: 8).values, first, "another seed, other numbers")
        XCTAssertNotEqual(try bench.run(pipeline).values, first, "the default seed is 1")
    }

    func testAPipelineThatDoesNotCheckThrowsWithItsLineAndColumn() throws {
        let bench = try PipelineTestBench(components: [Self.double])
        XCTAssertThrowsError(try bench.run("source: { events: { marbles: \"1|\" } }\nops: [tripple]\nsink: record\n")) {
            let message = "\($0)"
            XCTAssertTrue(message.hasPrefix("pipeline.yaml:2:"), message)
            assertContains(message, "tripple")
        }
    }

    func testAPluginsEntryPointRegistersItsComponentsAndItsFailuresAreReported() throws {
        let bench = try PipelineTestBench(plugin: { pointer in
            PluginRegistrar.from(pointer).register(Self.double)
            return 0
        })
        XCTAssertEqual(Set(bench.componentNames), ["double", "events", "record"])
        XCTAssertEqual(
            try bench.run("source: { events: { marbles: \"4|\" } }\nops: [double]\nsink: record\n").values, [8])
        XCTAssertThrowsError(try PipelineTestBench(plugin: { _ in 3 })) {
            XCTAssertEqual("\($0)", "the plugin's register entry point returned 3")
        }
        XCTAssertThrowsError(
            try PipelineTestBench(plugin: { pointer in
                PluginRegistrar.from(pointer).register(Self.double)
                PluginRegistrar.from(pointer).register(Self.double)
                return 0
            })
        ) { XCTAssertTrue("\($0)".contains("double"), "\($0)") }
    }

    /// The README shows the example plugin's test: each line of that block is in the test file,
    /// in order, so what the README shows is what `make test` runs.
    func testTheReadmesPluginTestIsTheExamplesOwn() throws {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: Repository.root.appendingPathComponent(
                "Examples/TextPlugin/Tests/TextPluginTests/TextPluginTests.swift"),
            encoding: .utf8)
        let start = try XCTUnwrap(readme.range(of: "```swift\nimport PipelineTesting\n"))
        let end = try XCTUnwrap(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let shown = readme[start.lowerBound..<end.lowerBound].split(separator: "\n").dropFirst()
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        XCTAssertGreaterThan(shown.count, 10)
        var rest = example[...]
        for line in shown {
            guard let found = rest.range(of: line + "\n") else {
                return XCTFail("the README's line is not in the example's test, in order: \(line)")
            }
            rest = rest[found.upperBound...]
        }
    }
}
