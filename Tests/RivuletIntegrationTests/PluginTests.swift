import BinaryTestSupport
import Components
import Foundation
@_spi(Host) import PluginAPI
import RivuletTestSupport
import XCTest

/// Swift operator plugins loaded with dlopen, through the binary: the example plugin, and every
/// way loading one can fail (each a clear error, exit 2, never a trap).
final class PluginTests: XCTestCase {
    static let example = Repository.root.appendingPathComponent("Examples/TextPlugin")
    static let library = example.appendingPathComponent(".build/debug/libTextPlugin.so").path
    private var directory: URL!

    override func setUpWithError() throws {
        guard FileManager.default.fileExists(atPath: Self.library) else {
            throw XCTSkip(
                "build the example plugin first: swift build --package-path Examples/TextPlugin (make test does)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rivulet-plugins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    /// A shared library written in C, with the given source.
    private func cLibrary(_ name: String, _ source: String) throws -> String {
        let c = directory.appendingPathComponent("\(name).c")
        try source.write(to: c, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("lib\(name).so").path
        let compiler = try ChildProcess(executable: "cc", arguments: ["-shared", "-fPIC", "-o", output, c.path])
        let result = compiler.communicate(timeout: 120)
        XCTAssertEqual(result.termination, .exited(0), String(decoding: result.standardError, as: UTF8.self))
        return output
    }

    func testThePluginCarriesTheBinaryInterfaceItWasBuiltAgainst() throws {
        // Were the identifier read from the core at run time, a stale plugin would report the
        // core's own, pass the check, and crash on a changed layout.
        let nm = Process()
        nm.executableURL = URL(fileURLWithPath: "/usr/bin/nm")
        nm.arguments = ["-D", "--undefined-only", Self.library]
        let output = Pipe()
        nm.standardOutput = output
        try nm.run()
        let symbols = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        nm.waitUntilExit()
        XCTAssertEqual(nm.terminationStatus, 0)
        XCTAssertTrue(symbols.contains("PluginAPI"), "the plugin uses the core: \(symbols.prefix(200))")
        XCTAssertFalse(
            symbols.contains("binaryInterfaces6UInt64V"), "PluginAPI.binaryInterface is compiled into the plugin")
    }

    /// The README's "from zero": its Package.swift steps and its Swift file, built with `swift
    /// build` into a plugin that `rivulet run` loads and runs.
    func testThePluginFromZeroOfTheReadmeBuildsAndRuns() throws {
        let readme = try String(
            contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        let intro = try XCTUnwrap(readme.range(of: "From zero: make a folder"))
        let start = try XCTUnwrap(readme.range(of: "```swift\n", range: intro.upperBound..<readme.endIndex))
        let end = try XCTUnwrap(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let swiftFile = String(readme[start.upperBound..<end.lowerBound])
        assertContains(swiftFile, "rivulet_plugin_register")

        let package = directory.appendingPathComponent("Shout")
        try FileManager.default.createDirectory(
            at: package.appendingPathComponent("Sources/Shout"), withIntermediateDirectories: true)
        // Copied, pointed at the core, renamed, the test target left out: as the README says.
        var manifest = try String(contentsOf: Self.example.appendingPathComponent("Package.swift"), encoding: .utf8)
        manifest = manifest.replacingOccurrences(
            of: "\"../../Core\"", with: "\"\(Repository.root.appendingPathComponent("Core").path)\"")
        manifest = manifest.replacingOccurrences(of: "TextPlugin", with: "Shout")
        let testTarget = try XCTUnwrap(manifest.range(of: "        .testTarget("))
        let targetEnd = try XCTUnwrap(
            manifest.range(of: "        ),\n", range: testTarget.upperBound..<manifest.endIndex))
        manifest.removeSubrange(testTarget.lowerBound..<targetEnd.upperBound)
        try manifest.write(to: package.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try swiftFile.write(
            to: package.appendingPathComponent("Sources/Shout/Shout.swift"), atomically: true, encoding: .utf8)

        let build = try ChildProcess(executable: "swift", arguments: ["build", "--package-path", package.path])
        let built = build.communicate(timeout: 600)
        XCTAssertEqual(
            built.termination, .exited(0),
            String(decoding: built.standardOutput + built.standardError, as: UTF8.self).suffix(3000).description)
        let library = package.appendingPathComponent(".build/debug/libShout.so").path
        let pipeline = directory.appendingPathComponent("shout.yaml").path
        try "source: stdin\nops: [shout]\nsink: stdout\n".write(toFile: pipeline, atomically: true, encoding: .utf8)
        let run = try runRivulet(["run", pipeline, "--plugin", library], stdin: "hello\nplugin\n")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "\"HELLO\"\n\"PLUGIN\"\n")
    }

    func testTheExamplePluginIsListedCheckedAndTested() throws {
        let listed = try runRivulet(["components", "--plugin", Self.library])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        assertContains(listed.stdout, "slugify ")
        XCTAssertTrue(listed.stdout.contains("[\(Self.library)]"), "the origin is shown")
        let detail = try runRivulet(["components", "slugify", "--plugin", Self.library])
        assertContains(detail.stdout, "separator (string), default -")
        let tested = try runRivulet(["test", Self.example.path])
        XCTAssertEqual(tested.status, 0, tested.stdout + tested.stderr)
        XCTAssertTrue(tested.stdout.hasSuffix("1 passed, 0 failed\n"))
        let pipeline = directory.appendingPathComponent("p.yaml")
        try
            "source: { events: [{ at: 0ms, next: \"One two  three\" }] }\nops: [wordCount, { slugfy: {} }]\nsink: stdout\n"
            .write(to: pipeline, atomically: true, encoding: .utf8)
        let linted = try runRivulet(["lint", pipeline.path, "--plugin", Self.library])
        XCTAssertEqual(linted.status, 2)
        assertContains(linted.stderr, "2:20: error: unknown operator 'slugfy'; did you mean 'slugify'?")
    }

    /// The example plugin's `countBy` declares itself keyed by its `by` (`ComponentTraits`), as
    /// the built-in keyed operators do: `partitionBy` by the same key splits it into its
    /// partitions, by another key warns, and `wordCount`, which declares nothing, needs the
    /// whole stream (one partition).
    func testAPluginOperatorDeclaredKeyedIsSplitByPartitionBy() throws {
        func pipeline(_ ops: String, events: String = "") -> String {
            """
            plugins: [\(Self.library)]
            source: { events: [\(events)] }
            ops:
              - partitionBy: { key: ., partitions: 4, ops: [\(ops)] }
            sink: stdout
            """
        }
        func lint(_ ops: String) throws -> String {
            let file = directory.appendingPathComponent("lint.yaml")
            try pipeline(ops).write(to: file, atomically: true, encoding: .utf8)
            let linted = try runRivulet(["lint", file.path])
            XCTAssertEqual(linted.status, 0, linted.stderr)
            return linted.stdout + linted.stderr
        }
        XCTAssertFalse(try lint("{ countBy: . }").contains("warning"))
        assertContains(try lint("{ countBy: .user }"), "countBy keyed by .user, not by the partition key .")
        assertContains(try lint("wordCount"), "wordCount needs the whole stream: ops run as one partition")

        // Keys a, b, c: FNV-1a 32 modulo 4 puts a in 0, b in 1, c in 2 (whole-stream ops would
        // run as one partition, all four in 0).
        let events =
            "{ at: 0ms, next: a }, { at: 0ms, next: b }, { at: 0ms, next: a }, { at: 0ms, next: c }, "
            + "{ at: 30s, next: x }"
        let file = directory.appendingPathComponent("split.yaml").path
        try pipeline("{ countBy: . }", events: events).write(toFile: file, atomically: true, encoding: .utf8)
        let port = freeLoopbackPort()
        let run = try startRivulet(["run", file, "--metrics", "127.0.0.1:\(port)"], output: .pipe, error: .pipe)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let elements = "rivulet_partition_elements_total"
        let metrics = LoopbackHTTP.metrics(port, once: elements, [#"partition="0""#], is: 2)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, elements, [#"partition="0""#]), 2, metrics)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, elements, [#"partition="1""#]), 1, metrics)
        XCTAssertEqual(LoopbackHTTP.sample(metrics, elements, [#"partition="2""#]), 1, metrics)
    }

    func testOnlyOneCopyOfTheCoreIsLoaded() throws {
        let process = try ChildProcess(
            executable: "env",
            arguments: ["LD_DEBUG=files", productsDirectory().appendingPathComponent("rivulet").path]
                + ["components", "--plugin", Self.library], output: .null)
        let log = String(decoding: process.communicate(timeout: 60).standardError, as: UTF8.self)
        let initialised = log.split(separator: "\n").filter {
            $0.contains("calling init:") && $0.contains("libRivuletCore.so")
        }
        XCTAssertEqual(initialised.count, 1, initialised.joined(separator: "\n"))
    }

    func testEveryLoadingFailureIsAClearErrorWithExitTwo() throws {
        let notAPlugin = try cLibrary("plain", "int nothing_here(void) { return 0; }\n")
        let older = try cLibrary(
            "old",
            "int rivulet_plugin_api_version(void) { return 16; }\nint rivulet_plugin_register(void *r) { return 0; }\n")
        let otherBuild = try cLibrary(
            "other",
            "unsigned long long rivulet_plugin_interface(void) { return 0x0123456789abcdefULL; }\n"
                + "int rivulet_plugin_register(void *r) { return 0; }\n")
        let noRegister = try cLibrary(
            "half",
            "unsigned long long rivulet_plugin_interface(void) { return \(PluginAPI.coreInterface)ULL; }\n")
        let copy = directory.appendingPathComponent("libTextPluginCopy.so").path
        try FileManager.default.copyItem(atPath: Self.library, toPath: copy)
        let ours = String(PluginAPI.coreInterface, radix: 16)
        let cases: [([String], String)] = [
            (["--plugin", "/no/such/plugin.so"], "plugin file '/no/such/plugin.so' not found"),
            (["--plugin", notAPlugin], "is not a Rivulet plugin: it has no rivulet_plugin_interface entry point"),
            (
                ["--plugin", older],
                "was built for an older rivulet (it numbers its plugin API instead of carrying its binary interface); rebuild the plugin"
            ),
            (
                ["--plugin", otherBuild],
                "was built against another build of rivulet's core (binary interface 0x0123456789abcdef; this rivulet's is 0x"
            ),
            (
                ["--plugin", otherBuild],
                "\(ours)): rebuild the plugin against this rivulet, from an empty build folder"
            ),
            (["--plugin", noRegister], "is not a Rivulet plugin: it has no rivulet_plugin_register entry point"),
            (["--plugin", Self.library, "--plugin", copy], "component 'slugify' is registered by both"),
        ]
        for (arguments, message) in cases {
            let result = try runRivulet(["components"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("Fatal error"), result.stderr)
        }
        let pipeline = directory.appendingPathComponent("p.yaml")
        try "plugins: [\(otherBuild)]\nsource: { events: [{ at: 0ms, next: a }] }\nsink: stdout\n"
            .write(to: pipeline, atomically: true, encoding: .utf8)
        let linted = try runRivulet(["lint", pipeline.path])
        XCTAssertEqual(linted.status, 2)
        assertContains(
            linted.stderr,
            "p.yaml:1:11: error: plugin '\(otherBuild)' was built against another build of rivulet's core")
    }
}
