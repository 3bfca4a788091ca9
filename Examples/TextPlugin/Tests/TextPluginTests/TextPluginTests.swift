@_spi(Host) import PluginAPI
import XCTest

@testable import TextPlugin

/// The example plugin's operators, registered and run as rivulet would run them.
final class TextPluginTests: XCTestCase {
    private func run(_ pipeline: String) throws -> [String] {
        let registry = ComponentRegistry()
        let registrar = PluginRegistrar(registry: registry, origin: "tests")
        XCTAssertEqual(rivuletPluginRegister(Unmanaged.passUnretained(registrar).toOpaque()), 0)
        XCTAssertEqual(registrar.registered, ["slugify", "wordCount"])
        var received: [String] = []
        try registry.register(
            ComponentSpec(
                name: "collect", summary: "Collects.", example: "sink: collect",
                factory: .sink { _, _ in Collector { received.append($0) } }))
        let values = Parameter<[Value]>("values", doc: "The values.")
        try registry.register(
            ComponentSpec(
                name: "list", summary: "Emits its values.", parameters: [values], primary: values,
                example: "source: { list: [a] }",
                factory: .source { parameters, _ in
                    PipelineSource { _ in Observable.from(parameters[values]) }
                }))
        let loaded = PipelineLoader(registry: registry, environment: [:]).load(text: pipeline, path: "p.yaml")
        let checked = try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
        let scheduler = VirtualTimeScheduler()
        let compiled = try PipelineCompiler.compile(
            checked, scheduler: scheduler, environment: ExpressionEnvironment(seed: 1), baseDirectory: ".",
            log: { _ in })
        _ = compiled.start()
        scheduler.start()
        return received
    }

    func testSlugify() throws {
        XCTAssertEqual(
            try run("source: { list: [\"Hello, World!\", \"  Swift  6.3 \"] }\nops: [slugify]\nsink: collect\n"),
            ["\"hello-world\"", "\"swift-6-3\""])
        XCTAssertEqual(
            try run(
                "source: { list: [{ title: \"A B\" }] }\nops: [{ slugify: { field: title, separator: _ } }]\nsink: collect\n"
            ),
            ["{\"title\":\"A B\",\"titleSlug\":\"a_b\"}"])
    }

    func testWordCount() throws {
        XCTAssertEqual(
            try run("source: { list: [\"one  two\\tthree\", \"\"] }\nops: [wordCount]\nsink: collect\n"),
            ["{\"text\":\"one  two\\tthree\",\"words\":3}", "{\"text\":\"\",\"words\":0}"])
    }
}

final class Collector: PipelineSink {
    let onValue: (String) -> Void

    init(_ onValue: @escaping (String) -> Void) {
        self.onValue = onValue
    }

    func receive(_ event: Event<Value>) {
        if case .next(let value) = event { onValue(value.description) }
    }

    func close() {}
}
