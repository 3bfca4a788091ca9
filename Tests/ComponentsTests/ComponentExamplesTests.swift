import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// Every component's example (its spec's, shown in `rivulet components` and docs/components.md)
/// is checked as a user would paste it: placed in a minimal pipeline with the streams and files
/// it names, it must load with no error and no warning.
final class ComponentExamplesTests: LeakCheckingTestCase {
    /// The streams examples read (`withLatestFrom: { stream: items }`, `zip: [other]`, ...).
    private static let streams = [
        "items", "ticks", "other", "prices", "clicks", "credentialsValid", "b", "c", "previousTaps", "stop", "status",
    ]

    /// `example` in a minimal pipeline: an operator's after a source, a source's before a sink, a
    /// sink's after a source; with every stream of `streams` defined.
    static func pipeline(for spec: ComponentSpec) -> String {
        let example = spec.example
        if example.hasPrefix("sink:") { return "source: { events: [] }\n" + example + "\n" }
        var defined = streams.map { "  \($0):\n    source: { events: [] }" }
        let main: String
        if example.hasPrefix("source:") {
            main = "  main:\n" + indent(example, by: 4)
        } else if example.hasPrefix("- stream:") {
            main = "  main:\n    source: { events: [] }"
        } else {
            main = "  main:\n    source: { events: [] }\n    ops:\n" + indent(example, by: 6)
        }
        defined.append(main)
        let text = "streams:\n" + defined.joined(separator: "\n") + "\n"
        // A sink written as an item of `sinks:` (it names its stream).
        if example.hasPrefix("- stream:") { return text + "sinks:\n" + indent(example, by: 2) + "\n" }
        return text + "sinks:\n  - { stream: main, stdout: {} }\n"
    }

    private static func indent(_ text: String, by spaces: Int) -> String {
        let padding = String(repeating: " ", count: spaces)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { padding + $0 }.joined(
            separator: "\n")
    }

    func testEveryComponentsExampleLoadsCleanInAMinimalPipeline() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("examples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The folders and files examples name, relative to the pipeline file.
        for folder in ["out", "data", "timelines", "logs", "fixtures"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try "[1, 2]".write(
            to: directory.appendingPathComponent("fixtures/featured.json"), atomically: true, encoding: .utf8)
        try Data().write(to: directory.appendingPathComponent("data/orders.db"))
        try "route,team\n/orders,shop\n".write(
            to: directory.appendingPathComponent("owners.csv"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            atPath: WasmTestModules.exampleFolder + "/quota.wasm",
            toPath: directory.appendingPathComponent("quota.wasm").path)
        let registry = PipelineHarness().registry()
        var failures: [String] = []
        for spec in registry.all where !spec.example.isEmpty && spec.name != "record" {
            let text = Self.pipeline(for: spec)
            let loaded = PipelineLoader(registry: registry, environment: ["WEBHOOK_TOKEN": "t"]).load(
                text: text, path: directory.appendingPathComponent("p.yaml").path)
            let problems = loaded.diagnostics.map { "\($0.location.line):\($0.location.column): \($0.message)" }
            if loaded.pipeline == nil || !problems.isEmpty {
                failures.append(
                    "\(spec.name) (\(spec.kind)):\n\(spec.example)\n  -> \(problems.joined(separator: "\n  -> "))")
            }
        }
        XCTAssertTrue(failures.isEmpty, "\(failures.count) examples fail:\n\n" + failures.joined(separator: "\n\n"))
    }
}
