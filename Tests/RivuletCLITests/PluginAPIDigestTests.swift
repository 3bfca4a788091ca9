import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// The plugin API's surface is recorded in Core/PluginAPI.digest, and CI's check fails when it
/// changes unannounced (run after the build, as CI does).
final class PluginAPIDigestTests: BinaryTestCase {

    private func script(_ arguments: [String], digest: String? = nil, identifier: String? = nil) throws -> (
        status: Int32, output: String
    ) {
        var environment = digest.map { ["PLUGIN_API_DIGEST": $0] } ?? [:]
        if let identifier { environment["PLUGIN_API_IDENTIFIER"] = identifier }
        let process = try ChildProcess(
            executable: "env",
            arguments: environment.map { "\($0)=\($1)" } + [
                "python3", Repository.root.appendingPathComponent("scripts/plugin-api.py").path,
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
        assertContains(result.output, "unchanged")
    }

    /// The face plugins see stays narrow: at most 550 lines, and nothing of the host's machinery
    /// (the checkpoint driver, the clocks a run is driven by, meters, delivery, the traits only the
    /// planner reads), which is `@_spi(Host)`. A plugin keeps state through `operatorState()` and
    /// `keepState`, and declares itself keyed through `ComponentTraits.keyed(by:)`.
    func testTheRecordedSurfaceIsNarrowAndHoldsNoHostMachinery() throws {
        let recorded = try String(
            contentsOf: Repository.root.appendingPathComponent("Core/PluginAPI.digest"), encoding: .utf8)
        let lines = recorded.split(separator: "\n")
        XCTAssertLessThanOrEqual(lines.count, 550)
        for hostOnly in [
            "Pipeline.Checkpoints", "Reactive.SerialRunLoopScheduler", "Reactive.VirtualTimeScheduler",
            "Reactive.EventTimeScheduler", "Pipeline.ComponentMeter", "Pipeline.Delivery", "Pipeline.SourceDrains",
            "ComponentTraits.splitOrder", "ComponentContext.existing", "ComponentContext.shared",
            "ParameterValues.values",
        ] {
            XCTAssertFalse(lines.contains { $0.contains(hostOnly) }, "\(hostOnly) is host-only")
        }
        for pluginFacing in [
            "ComponentContext.operatorState()", "ComponentContext.keepState", "ComponentTraits.keyed(by:)",
            "ComponentSpec.runningOnAnyThread()", "ComponentSpec.declaring",
        ] {
            XCTAssertTrue(lines.contains { $0.contains(pluginFacing) }, "\(pluginFacing) is what plugins use")
        }
    }

    func testARemovedDeclarationFailsTheCheckAndIsRecordedByUpdate() throws {
        let recorded = try String(
            contentsOf: Repository.root.appendingPathComponent("Core/PluginAPI.digest"), encoding: .utf8)
        // A digest that lists one more declaration than the modules have: as if it had been removed.
        let doctored = directory.appendingPathComponent("PluginAPI.digest")
        try (recorded + "Func Pipeline.Value.removedMember() : Swift.Int\n").write(
            to: doctored, atomically: true, encoding: .utf8)
        let check = try script(["check"], digest: doctored.path)
        XCTAssertEqual(check.status, 1, check.output)
        assertContains(check.output, "record it with `make plugin-api`", "- Func Pipeline.Value.removedMember()")
    }

    func testAnIdentifierThatIsNotTheBuiltInterfacesFailsTheCheck() throws {
        let written = directory.appendingPathComponent("BinaryInterface.swift")
        try "@_alwaysEmitIntoClient public static var binaryInterface: UInt64 { 0x0000_0000_0000_0001 }\n".write(
            to: written, atomically: true, encoding: .utf8)
        let check = try script(["check"], identifier: written.path)
        XCTAssertEqual(check.status, 1, check.output)
        assertContains(
            check.output, "the binary interface changed (0x0000000000000001 -> 0x",
            "write the new one with `make plugin-api`")
    }

    /// The identifier changes when, and only when, what a built plugin depends on changes: a
    /// module of the test's own, compiled with swiftc in variants of one edit each.
    func testTheIdentifierFollowsTheBinaryInterfaceAndNothingElse() throws {
        let original = """
            public struct Meter {
                public var count: Int
                private var peak: Int = 0
                public init(count: Int) { self.count = count }
                @inlinable public func doubled() -> Int { count * 2 }
                @inlinable public func each(_ visit: (Int) -> Void = { _ in }) { visit(count) }
                @usableFromInline internal func spare() -> Int { 1 }
                internal func slow() -> Int { 2 }
                public func fast() -> Int { count + 1 }
            }
            open class Origin {
                public init() {}
                open func fail() {}
            }

            """
        func identifier(_ name: String, _ edit: (String) -> String = { $0 }) throws -> String {
            let folder = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let source = edit(original)
            XCTAssertTrue(name == "same" || source != original, "\(name) edits the module")
            try source.write(to: folder.appendingPathComponent("Meter.swift"), atomically: true, encoding: .utf8)
            let compiler = try ChildProcess(
                executable: "swiftc",
                arguments: [
                    // Built for testing, as `swift build` builds the core: internal declarations are
                    // then in the module too, and must not count.
                    "-emit-module", "-enable-testing", "-module-name", "Meter",
                    folder.appendingPathComponent("Meter.swift").path, "-o",
                    folder.appendingPathComponent("Meter.swiftmodule").path,
                ])
            let compiled = compiler.communicate(timeout: 120)
            XCTAssertEqual(compiled.termination, .exited(0), String(decoding: compiled.standardError, as: UTF8.self))
            let result = try script(["interface", folder.path, folder.path, "Meter"])
            XCTAssertEqual(result.status, 0, result.output)
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let base = try identifier("same")
        XCTAssertTrue(base.hasPrefix("0x") && base.count == 18, base)
        let unchanged: [(String, (String) -> String)] = [
            ("a body that is not inlined", { $0.replacingOccurrences(of: "{ count + 1 }", with: "{ count + 2 }") }),
            ("an internal function's body", { $0.replacingOccurrences(of: "{ 2 }", with: "{ 3 }") }),
            (
                "an internal function's signature",
                {
                    $0.replacingOccurrences(
                        of: "internal func slow() -> Int", with: "internal func slow(_ x: Int = 0) -> Int")
                }
            ),
            ("an internal type added", { $0 + "struct Plan: Equatable { var steps: [Int] = [] }\n" }),
            (
                "a comment in an inlined body",
                { $0.replacingOccurrences(of: "{ count * 2 }", with: "{ count * 2 /* twice */ }") }
            ),
            (
                "two functions swapped",
                {
                    $0.replacingOccurrences(of: "    public func fast() -> Int { count + 1 }\n", with: "")
                        .replacingOccurrences(
                            of: "    @usableFromInline",
                            with: "    public func fast() -> Int { count + 1 }\n    @usableFromInline")
                }
            ),
        ]
        for (edit, change) in unchanged {
            XCTAssertEqual(try identifier(edit.replacingOccurrences(of: " ", with: "-"), change), base, edit)
        }
        let changed: [(String, (String) -> String)] = [
            ("an inlined body", { $0.replacingOccurrences(of: "{ count * 2 }", with: "{ count * 3 }") }),
            (
                "an inlined body after a closure given as a default argument",
                { $0.replacingOccurrences(of: "{ visit(count) }", with: "{ visit(count + 1) }") }
            ),
            (
                "a private stored property added",
                {
                    $0.replacingOccurrences(
                        of: "private var peak: Int = 0", with: "private var peak: Int = 0\n    private var low = 0")
                }
            ),
            (
                "two stored properties swapped",
                {
                    $0.replacingOccurrences(
                        of: "    public var count: Int\n    private var peak: Int = 0",
                        with: "    private var peak: Int = 0\n    public var count: Int")
                }
            ),
            (
                "a method added to an open class",
                {
                    $0.replacingOccurrences(
                        of: "open func fail() {}", with: "open func fail() {}\n    open func retry() {}")
                }
            ),
            (
                "a public function's signature",
                { $0.replacingOccurrences(of: "func fast() -> Int", with: "func fast(_ unused: Int = 0) -> Int") }
            ),
        ]
        for (edit, change) in changed {
            XCTAssertNotEqual(try identifier(edit.replacingOccurrences(of: " ", with: "-"), change), base, edit)
        }
    }

    func testAnAddedDeclarationMustBeRecorded() throws {
        let recorded = try String(
            contentsOf: Repository.root.appendingPathComponent("Core/PluginAPI.digest"), encoding: .utf8)
        let lines = recorded.split(separator: "\n", omittingEmptySubsequences: false)
        let withoutOne = lines.filter { !$0.hasPrefix("Func Reactive.ObservableType.amb(") }
        XCTAssertEqual(withoutOne.count, lines.count - 1)
        let doctored = directory.appendingPathComponent("PluginAPI.digest")
        try withoutOne.joined(separator: "\n").write(to: doctored, atomically: true, encoding: .utf8)
        let check = try script(["check"], digest: doctored.path)
        XCTAssertEqual(check.status, 1, check.output)
        assertContains(check.output, "record it with `make plugin-api`")
        // `update` writes the identifier too: to a copy here, not to the repository's file.
        let identifier = directory.appendingPathComponent("BinaryInterface.swift").path
        let update = try script(["update"], digest: doctored.path, identifier: identifier)
        XCTAssertEqual(update.status, 0, update.output)
        XCTAssertEqual(try script(["check"], digest: doctored.path, identifier: identifier).status, 0)
    }
}
