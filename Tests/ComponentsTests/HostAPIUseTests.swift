import Foundation
import XCTest

/// The plugin boundary from the built-in side: a component file sees the host-only API
/// (`@_spi(Host) import Pipeline`) only when it needs something a plugin cannot have, and says
/// what. A file that no longer needs it must drop the import, and a new one must be added here
/// with its reason, so the list only shrinks as the host's services become public.
final class HostAPIUseTests: XCTestCase {
    /// Each file of `Sources/Components` that imports the host-only API, and what it uses.
    static let allowed: [String: String] = [
        "BuiltinComponents.swift": "builds the ComponentRegistry",
        "Operators/Aggregate.swift": "takes eventTime's hand-on (handedOn)",
        "Operators/EventTime.swift": "counts skipped elements (SkippedElements)",
        "Operators/Exec.swift": "masks secrets (Secrets)",
        "Operators/PartitionBy.swift": "builds its partitions' chains (ChainPlacement, PipelineCompiler, RunMeters)",
        "Sinks/File.swift": "resolves paths from the pipeline's file (PipelineLoader), meters",
        "Sinks/HTTPSink.swift": "meters (ComponentMeter)",
        "Sinks/NATSSink.swift": "meters, secrets",
        "Sinks/Stdout.swift": "meters",
        "Sinks/Table.swift": "meters, its place in the file, secrets",
        "Sources/Events.swift": "reads a YAML file beside the pipeline (PipelineLoader, YAMLLoader)",
        "Sources/FileSource.swift": "resolves paths (PipelineLoader), reports input progress",
        "Sources/Fixture.swift": "reads a YAML file beside the pipeline, meters, input progress",
        "Sources/HTTPServer.swift": "masks secrets",
        "Sources/NATS.swift": "meters, secrets, source readiness",
        "Support/FileChecks.swift": "resolves paths (PipelineLoader)",
        "Support/HTTP/HTTPFetch.swift": "meters",
        "Support/HTTP/HTTPMessage.swift": "masks secrets",
        "Support/LineReader.swift": "the JSON fast path (Scratch, parseOnDemand)",
        "Support/LineWriter.swift": "masks secrets",
        "Support/MergedChains.swift": "reads a chain's operators",
        "Support/NATS/NATSConsumer.swift": "meters",
        "Support/NATS/NATSParameters.swift": "secrets",
        "Support/NATS/NATSPartitionedReading.swift": "gauges per partition",
        "Support/NATS/NATSReading.swift": "meters",
        "Support/ParallelLines.swift": "the JSON fast path",
        "Support/PartitionedRun.swift": "partitions on threads (ChainPlacement, CheckpointBarrier, meters)",
        "Support/StandardOutput.swift": "meters",
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
