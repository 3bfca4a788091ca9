import Components
import Foundation
import XCTest

/// The plugin API's surface is recorded in Core/PluginAPI.digest, and CI's check fails when it
/// changes unannounced (run after the build, as CI does).
final class PluginAPIDigestTests: BinaryTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func script(_ arguments: [String], digest: String? = nil) throws -> (status: Int32, output: String) {
        let environment = digest.map { ["PLUGIN_API_DIGEST": $0] } ?? [:]
        let process = try ChildProcess(
            executable: "env",
            arguments: environment.map { "\($0)=\($1)" } + [
                "python3", Self.root.appendingPathComponent("scripts/plugin-api.py").path,
            ] + arguments, input: .pipe)
        let result = process.communicate(timeout: 60)
        return (
            result.termination.status,
            String(decoding: result.standardOutput + result.standardError, as: UTF8.self)
        )
    }

    func testTheRecordedSurfaceMatchesTheBuiltModules() throws {
        let result = try script(["check"])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("unchanged"), result.output)
    }

    func testARemovedDeclarationWithoutANewVersionFailsAndCannotBeRecorded() throws {
        let recorded = try String(
            contentsOf: Self.root.appendingPathComponent("Core/PluginAPI.digest"), encoding: .utf8)
        // A digest that lists one more declaration than the modules have: as if it had been removed.
        let doctored = directory.appendingPathComponent("PluginAPI.digest")
        try (recorded + "Func Pipeline.Value.removedMember() : Swift.Int\n").write(
            to: doctored, atomically: true, encoding: .utf8)
        let check = try script(["check"], digest: doctored.path)
        XCTAssertEqual(check.status, 1, check.output)
        XCTAssertTrue(check.output.contains("breaking change to the plugin API"), check.output)
        XCTAssertTrue(check.output.contains("- Func Pipeline.Value.removedMember()"), check.output)
        let update = try script(["update"], digest: doctored.path)
        XCTAssertEqual(update.status, 1, update.output)
        XCTAssertTrue(update.output.contains("raise PluginAPI.version"), update.output)
        XCTAssertEqual(
            try String(contentsOf: doctored, encoding: .utf8).hasSuffix("removedMember() : Swift.Int\n"), true)
    }

    func testAnAddedDeclarationMustBeRecorded() throws {
        let recorded = try String(
            contentsOf: Self.root.appendingPathComponent("Core/PluginAPI.digest"), encoding: .utf8)
        let lines = recorded.split(separator: "\n", omittingEmptySubsequences: false)
        let withoutOne = lines.filter { !$0.hasPrefix("Func Reactive.ObservableType.amb(") }
        XCTAssertEqual(withoutOne.count, lines.count - 1)
        let doctored = directory.appendingPathComponent("PluginAPI.digest")
        try withoutOne.joined(separator: "\n").write(to: doctored, atomically: true, encoding: .utf8)
        let check = try script(["check"], digest: doctored.path)
        XCTAssertEqual(check.status, 1, check.output)
        XCTAssertTrue(check.output.contains("record it with `make plugin-api`"), check.output)
        let update = try script(["update"], digest: doctored.path)
        XCTAssertEqual(update.status, 0, update.output)
        XCTAssertEqual(try script(["check"], digest: doctored.path).status, 0)
    }
}
