import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import Tooling

@_spi(Host) @testable import Components
@_spi(Components) @testable import PipelineTesting

/// The parsers a user's file or a server's answer reaches, as libFuzzer targets: the YAML loader
/// with the whole validation, test files, expressions (parsed and evaluated), the JSON parser,
/// marble diagrams and timelines, the HTML image extractor, and (ServerFuzzTargets) the webhook
/// server's request parsing, SQLite row decoding and the stateful operators with extreme numbers;
/// (WasmFuzzTarget) WebAssembly plugin modules and the elements a plugin is given.
/// `RIVULET_FUZZ_TARGET` picks one.
/// A normal build runs inputs once instead (`RivuletFuzz TARGET FILE|DIR...`): how `make test`
/// replays the seeds and every crash that fuzzing found.
enum FuzzTargets {
    static let names = [
        "pipeline", "testfile", "expression", "json", "marbles", "html", "webhook", "sqlite", "operators", "wasm",
        "storedstate", "pgoutput",
    ]

    // Built once and only read: libFuzzer calls the target from one thread.
    nonisolated(unsafe) static let registry = ComponentRegistry(registering: BuiltinComponents.all)

    static func run(_ target: String, _ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        switch target {
        case "pipeline":
            _ = PipelineLoader(registry: registry, environment: ["HOME": "/tmp", "TOKEN": "secret-token"])
                .load(text: text, path: "fuzz.yaml")
        case "testfile":
            guard let root = try? YAMLLoader(file: "fuzz.test.yaml", environment: [:]).load(text) else { return }
            _ = PipelineTestFile.parse(root, file: "fuzz.test.yaml", baseDirectory: "/nonexistent")
        case "expression":
            guard let expression = try? Expression(text) else { return }
            let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 1))
            // Number text at and past every range (a `parseTime` of "1e400" once trapped) among them.
            let elements: [Value] = [
                .null, 3, "text", [1, 2, 3], ["a": ["b": 1]], .double(.nan), .int(.min), .int(.max),
                .double(1e300), "1e400", "-Infinity", "9999999999999999999999", "1e19", "8640000000000001",
            ]
            for element in elements {
                scope.element = element
                _ = try? expression.evaluate(in: scope)
            }
        case "json":
            checkOnDemand(bytes)
            guard let value = try? JSONParser.parse(bytes) else { return }
            var written: [UInt8] = []
            JSONSerializer.write(value, to: &written)
            guard let again = try? JSONParser.parse(written), again.isEqualInExpressions(to: value) || value.hasNaN
            else { fatalError("JSON round trip changed \(text)") }
        case "marbles":
            _ = try? TimelineEntry.parseMarbles(text, tick: .milliseconds(10), values: ["a": 1], context: nil)
            if let value = try? JSONParser.parse(bytes) { _ = try? TimelineEntry.parse(value, context: nil) }
        case "html":
            // A page read from the parser's events must give what a walk of its tree gives.
            for (charset, options) in [
                (nil, HTMLImages.Options()), ("shift_jis", HTMLImages.Options(includeData: true, limit: 5)),
            ] {
                let streamed = try? HTMLImages.extract(
                    bytes, pageURL: "https://example.test/a/b.html", charset: charset, options: options)
                let walked = try? HTMLImages.extract(
                    bytes, pageURL: "https://example.test/a/b.html", charset: charset, options: options,
                    walkingTree: true)
                guard streamed == walked else {
                    fatalError("events found \(streamed as Any), the tree \(walked as Any)")
                }
            }
            _ = try? HTMLImages.extract(
                bytes, pageURL: "https://example.test/", charset: "shift_jis",
                options: HTMLImages.Options(includeData: true, selector: "div img", limit: 5))
        case "webhook": ServerFuzzTargets.webhook(bytes)
        case "sqlite": ServerFuzzTargets.sqliteRow(bytes)
        case "operators": ServerFuzzTargets.operators(bytes)
        case "storedstate": ServerFuzzTargets.storedState(bytes)
        case "pgoutput": ServerFuzzTargets.pgoutput(bytes)
        case "wasm": WasmFuzzTarget.run(bytes)
        default:
            fatalError("unknown fuzz target '\(target)'; one of \(names.joined(separator: ", "))")
        }
    }
}

/// Reading on demand must agree with parsing whole: the same error, or a value that reads, compares
/// and writes out as the parsed one (its numbers and strings in their own text).
private func checkOnDemand(_ bytes: [UInt8]) {
    let whole: Result<Value, JSONError> = Result { () throws(JSONError) in try JSONParser.parse(bytes) }
    let lazy: Result<Value, JSONError> = bytes.withUnsafeBufferPointer { buffer in
        Result { () throws(JSONError) in try JSONParser.parseOnDemand(buffer) }
    }
    switch (whole, lazy) {
    case (.failure(let expected), .failure(let found)):
        guard expected == found else { fatalError("on-demand error \(found), parser \(expected)") }
    case (.success(let value), .success(let onDemand)):
        guard value.isEqualInExpressions(to: onDemand) || value.hasNaN else { fatalError("on-demand value differs") }
        if case .object(let object) = value {
            for key in object.keys where !(object[key]!.isEqualInExpressions(to: onDemand[key] ?? .null)) {
                fatalError("on-demand member \(key) differs")
            }
        }
        var written: [UInt8] = []
        JSONSerializer.write(onDemand, to: &written)
        guard let again = try? JSONParser.parse(written), again.isEqualInExpressions(to: value) || value.hasNaN else {
            fatalError("on-demand value written out reads differently")
        }
    default:
        fatalError("on-demand reading and parsing disagree on whether the text is JSON")
    }
}

extension Value {
    /// Whether a NaN is inside (NaN equals nothing, itself included).
    fileprivate var hasNaN: Bool {
        switch self {
        case .double(let double): return double.isNaN
        case .array(let items): return items.contains { $0.hasNaN }
        case .object(let object): return object.values.contains { $0.hasNaN }
        default: return false
        }
    }
}

/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func rivuletFuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let target = ProcessInfo.processInfo.environment["RIVULET_FUZZ_TARGET"] ?? "pipeline"
    FuzzTargets.run(target, Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if FUZZING
    /// libFuzzer's driver, called from this executable's own main (SwiftPM gives every executable
    /// target one, so libFuzzer's is not used).
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
    ) -> Int32
#endif

/// Fuzzes (a `-sanitize=fuzzer -DFUZZING` build), or runs each input file once through a target:
/// `RivuletFuzz TARGET FILE|DIRECTORY...`.
@main
struct FuzzMain {
    static func main() {
        #if FUZZING
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv) { data, size in rivuletFuzzOne(data, size) })
        #else
            replay(Array(CommandLine.arguments.dropFirst()))
        #endif
    }

    static func replay(_ arguments: [String]) {
        guard let target = arguments.first, FuzzTargets.names.contains(target) else {
            print("usage: RivuletFuzz \(FuzzTargets.names.joined(separator: "|")) FILE|DIRECTORY...")
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                FuzzTargets.run(target, Array(data))
                count += 1
            }
        }
        print("\(target): \(count) inputs, no crash")
    }
}
