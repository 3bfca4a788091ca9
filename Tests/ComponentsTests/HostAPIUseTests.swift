import Foundation
import RivuletTestSupport
import XCTest

/// The plugin boundary from the built-in side: a component file sees the host-only API
/// (`@_spi(Host) import Pipeline`) only when it needs something a plugin cannot have, and says
/// what. A file that no longer needs it must drop the import, and a new one must be added here
/// with its reason, so the list only shrinks as the host's services become public. Components
/// declare nothing `@_spi(Host)`: plugins cannot import `Components`, so what the CLI uses of it
/// is plainly public.
final class HostAPIUseTests: LeakCheckingTestCase {
    /// Each file of `Sources/Components` that imports the host-only API, and what it uses. What
    /// components need beyond the plugin face is `@_spi(Components)`: `context.meter` (counters,
    /// gauges, input progress), `Secrets`, `LocalFiles`, `YAMLDocument`, `context.connecting()`,
    /// `context.dropped(...)`, `Checkpointing.ofInnerChain`, the checkpoint driver, the clock and
    /// hand-on between adjacent operators. At most five may stay.
    static let allowed: [String: String] = [
        "Operators/PartitionBy.swift":
            "builds its partitions' chains on threads (ChainPlacement, PipelineCompiler, RunMeters)",
        "Support/Partitions/PartitionedRun.swift":
            "pauses partitions' threads for checkpoints (CheckpointBarrier, ChainPlacement)",
        "Support/Partitions/PartitionThreads.swift":
            "hands objects read on demand to partitions' threads as their bytes (JSONParser.pack and unpack, JSONScanner.Scratch)",
        "Support/Lines/LineReader.swift":
            "the JSON Lines fast path (JSONScanner.Scratch, parseOnDemand), inlined from the core",
        "Support/Lines/ParallelLines.swift":
            "the JSON Lines fast path on several threads (JSONScanner.Scratch, parseOnDemand)",
    ]

    func testOnlyListedComponentFilesImportTheHostOnlyAPI() throws {
        let root = Repository.root.appendingPathComponent("Sources/Components")
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: root.path))
        var importing: Set<String> = []
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            if text.contains("@_spi(Host)") { importing.insert(file) }
        }
        let unlisted = importing.subtracting(Self.allowed.keys).sorted()
        XCTAssertEqual(unlisted, [], "import the host-only API without a reason in HostAPIUseTests.allowed")
        XCTAssertLessThanOrEqual(Self.allowed.count, 5, "at most five component files may use the host-only API")
        let stale = Set(Self.allowed.keys).subtracting(importing).sorted()
        XCTAssertEqual(stale, [], "listed in HostAPIUseTests.allowed but no longer importing the host-only API")
    }
}
