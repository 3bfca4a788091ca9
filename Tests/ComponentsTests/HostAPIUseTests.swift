import Foundation
import XCTest

/// The plugin boundary from the built-in side: a component file sees the host-only API
/// (`@_spi(Host) import Pipeline`) only when it needs something a plugin cannot have, and says
/// what. A file that no longer needs it must drop the import, and a new one must be added here
/// with its reason, so the list only shrinks as the host's services become public.
final class HostAPIUseTests: XCTestCase {
    /// Each file of `Sources/Components` that imports the host-only API, and what it uses. What
    /// components need most is public: `context.meter` (counters, gauges, input progress),
    /// `Secrets`, `LocalFiles`, `context.connecting()`.
    static let allowed: [String: String] = [
        "BuiltinComponents.swift": "builds the host's ComponentRegistry",
        "Operators/Aggregate.swift": "takes what eventTime hands on to the operator after it (handedOn)",
        "Operators/EventTime.swift": "counts the elements it skips for the run's report (SkippedElements)",
        "Operators/PartitionBy.swift": "builds its partitions' chains (ChainPlacement, PipelineCompiler, RunMeters)",
        "Sources/Events.swift": "reads a timeline file with the pipeline's YAML loader (YAMLLoader)",
        "Sources/Fixture.swift": "reads a fixture file with the pipeline's YAML loader (YAMLLoader)",
        "Support/Lines/LineReader.swift": "the JSON fast path (JSONScanner.Scratch, parseOnDemand)",
        "Support/InnerChains/MergedChains.swift": "reads a chain's operators (ParameterValues.OperatorChain.operators)",
        "Support/Lines/ParallelLines.swift": "the JSON fast path (JSONScanner.Scratch, parseOnDemand)",
        "Support/Partitions/PartitionedRun.swift": "partitions on threads (ChainPlacement, CheckpointBarrier)",
        "Support/Timeline.swift": "reads YAML nodes (YAMLNode)",
    ]

    func testOnlyListedComponentFilesImportTheHostOnlyAPI() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/Components").standardizedFileURL
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: root.path))
        var importing: Set<String> = []
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            if text.contains("@_spi(Host) import") { importing.insert(file) }
        }
        let unlisted = importing.subtracting(Self.allowed.keys).sorted()
        XCTAssertEqual(unlisted, [], "import the host-only API without a reason in HostAPIUseTests.allowed")
        let stale = Set(Self.allowed.keys).subtracting(importing).sorted()
        XCTAssertEqual(stale, [], "listed in HostAPIUseTests.allowed but no longer importing the host-only API")
    }
}
