import Components
import Foundation
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @_spi(Components) @testable import Pipeline

/// Nothing decides by a component's name or reads its parameters by a written name: the
/// planner, lint, checkpoints and the docs read what each component declares
/// (`ComponentTraits`), so a plugin's component can declare the same. Validation reads
/// parameters by their declarations, never by text.
final class ComponentTraitsUseTests: LeakCheckingTestCase {
    static let root = Repository.root
        .standardizedFileURL

    /// Every Swift file of `Sources` and `Core/Sources`, with its lines.
    static func sourceFiles() throws -> [(path: String, lines: [Substring])] {
        var files: [(String, [Substring])] = []
        for top in ["Sources", "Core/Sources"] {
            let directory = root.appendingPathComponent(top)
            let names = try XCTUnwrap(FileManager.default.enumerator(atPath: directory.path))
            for case let name as String in names where name.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                files.append(("\(top)/\(name)", text.split(separator: "\n", omittingEmptySubsequences: false)))
            }
        }
        return files
    }

    /// Files with a list of words some of which are also components' names, and what they are.
    static let namesNotOfComponents = [
        "Sources/Tooling/Testing/PipelineTestRunner.swift": "a test file's keys for its inputs (events, values)"
    ]

    func testNothingDecidesByAComponentsNameOrReadsAParameterByItsWrittenName() throws {
        let names = Set(BuiltinComponents.all.map(\.name))
        let byName = try NSRegularExpression(pattern: #"spec\.name\s*(==|!=)|(==|!=)\s*BuiltinComponents\.\w+\.name"#)
        // `name == "dedupe"`: a name compared with a component's.
        let comparedText = try NSRegularExpression(pattern: #"name\s*(==|!=)\s*"([A-Za-z.]+)""#)
        let listedText = try NSRegularExpression(
            pattern: #"Set<String> = \[([^\]]*)\]|\[String: String\] = \[([^\]]*)\]"#)
        let readByText = try NSRegularExpression(
            pattern: #"(parameters|values)\.(values|locations)\["|specs\(named: ""#)
        var found: [String] = []
        for (path, lines) in try Self.sourceFiles() {
            for (number, line) in lines.enumerated() {
                let text = String(line)
                let range = NSRange(text.startIndex..., in: text)
                let place = "\(path):\(number + 1): \(text.trimmingCharacters(in: .whitespaces))"
                if byName.firstMatch(in: text, range: range) != nil
                    || readByText.firstMatch(in: text, range: range) != nil
                {
                    found.append(place)
                    continue
                }
                for match in comparedText.matches(in: text, range: range) {
                    let literal = [2].compactMap { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
                    if literal.contains(where: names.contains) { found.append(place) }
                }
                for match in listedText.matches(in: text, range: range) where Self.namesNotOfComponents[path] == nil {
                    let listed = [1, 2].compactMap { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
                    let words = listed.joined().split { !$0.isLetter && $0 != "." }.map(String.init)
                    if words.contains(where: names.contains) { found.append(place) }
                }
            }
        }
        XCTAssertEqual(found, [], "declare a trait (ComponentTraits) instead of deciding by name")
    }

    func testTheBuiltInKeyedOperatorsDeclareTheirKeys() throws {
        let user = try Pipeline.Expression(".user")
        func partitioning(_ spec: ComponentSpec, _ values: [String: Any]) -> String {
            switch spec.partitioning(ParameterValues(values: values)) {
            case .anyKey: return "any key"
            case .wholeStream: return "whole stream"
            case .keyed(let expression, let parameter): return "\(parameter): \(expression.source)"
            }
        }
        XCTAssertEqual(partitioning(BuiltinComponents.aggregate, ["by": user]), "by: .user")
        XCTAssertEqual(partitioning(BuiltinComponents.aggregate, [:]), "whole stream")
        XCTAssertEqual(partitioning(BuiltinComponents.groupBy, ["key": user]), "key: .user")
        XCTAssertEqual(partitioning(BuiltinComponents.dedupe, ["key": user]), "key: .user")
        XCTAssertEqual(partitioning(BuiltinComponents.dedupe, [:]), "any key")
        typealias B = BuiltinComponents
        for spec in [B.flatMap, B.concatMap, B.log, B.eventTime, B.filter, B.map] {
            XCTAssertEqual(partitioning(spec, [:]), "any key", spec.name)
        }
        for spec in [B.reduce, B.scan, B.debounce, B.take, B.window, B.partitionBy] {
            XCTAssertEqual(partitioning(spec, [:]), "whole stream", spec.name)
        }
        XCTAssertTrue(BuiltinComponents.reduce.traits.holdsUntilCompletion)
        XCTAssertTrue(BuiltinComponents.eventTime.traits.startsEventTime)
        XCTAssertTrue(BuiltinComponents.aggregate.traits.splitsByDefault)
        XCTAssertTrue(BuiltinComponents.httpSink.traits.runsUnderTests)
        XCTAssertEqual(
            BuiltinComponents.natsSource.traits.groupPartitions(
                ParameterValues(values: ["group": "g", "partitions": 12])), GroupPartitions(group: "g", partitions: 12))
        XCTAssertTrue(
            BuiltinComponents.natsSource.traits.awaitsAcknowledgement(ParameterValues(values: ["stream": "s"])))
        XCTAssertFalse(BuiltinComponents.natsSource.traits.awaitsAcknowledgement(ParameterValues(values: [:])))
        // Sources whose elements carry their messages' origins.
        let none = ParameterValues(values: [:])
        XCTAssertTrue(BuiltinComponents.natsSource.traits.setsOrigins(none))
        XCTAssertTrue(BuiltinComponents.httpServer.traits.setsOrigins(none))
        let changes = ParameterValues(values: ["slot": "s", "publication": "p", "url": "postgres://x"])
        XCTAssertTrue(BuiltinComponents.postgresSource.traits.setsOrigins(changes))
        XCTAssertFalse(
            BuiltinComponents.postgresSource.traits.setsOrigins(ParameterValues(values: ["query": "select 1"])))
        XCTAssertFalse(BuiltinComponents.fileSource.traits.setsOrigins(none))
    }
}

/// What the compiler works out of the run's sources before anything is built: a source that
/// sets origins counts where it is a stream's source and where it is an operator's inner source.
final class RunSourcesTests: LeakCheckingTestCase {
    private func sources(_ text: String) throws -> RunSources {
        let loaded = PipelineLoader(registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
            .load(text: text, path: "p.yaml")
        return RunSources(try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)"))
    }

    func testASourceThatSetsOriginsCountsAsAStreamsSourceAndAsAnInnerSource() throws {
        let nats = "{ nats: { url: \"nats://127.0.0.1:4222\", subject: x } }"
        XCTAssertTrue(try sources("source: \(nats)\nsink: stdout\n").setOrigins)
        XCTAssertTrue(try sources("source: { events: [] }\nops: [ { flatMap: \(nats) } ]\nsink: stdout\n").setOrigins)
        XCTAssertFalse(try sources("source: { events: [] }\nops: [ { map: . } ]\nsink: stdout\n").setOrigins)
        XCTAssertNil(try sources("source: \(nats)\nsink: stdout\n").group)
    }
}
