import Foundation
import RivuletTestSupport
import XCTest

/// Plugin modules for the `wasm` tests, compiled from C with the toolchain's clang (as a plugin
/// author would, with the example's `rivulet.h`), once per source.
enum WasmTestModules {
    /// The repository's `Examples/WasmPlugin`, which holds `rivulet.h`.
    static let exampleFolder = Repository.root.appendingPathComponent("Examples/WasmPlugin").path

    private static let folder: String = {
        let path = NSTemporaryDirectory() + "rivulet-wasm-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()
    nonisolated(unsafe) private static var built: [String: String] = [:]
    private static let lock = NSLock()

    /// The path of `source` compiled to a module (`#include "rivulet.h"` finds the example's).
    static func build(_ source: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let path = built[source] { return path }
        let name = "m\(built.count)"
        let sourcePath = "\(folder)/\(name).c"
        let modulePath = "\(folder)/\(name).wasm"
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let clang = Process()
        clang.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        clang.arguments = [
            "clang", "--target=wasm32", "-O2", "-nostdlib", "-fno-builtin", "-mbulk-memory", "-Wl,--no-entry",
            "-I", exampleFolder, "-o", modulePath, sourcePath,
        ]
        let errors = Pipe()
        clang.standardError = errors
        try clang.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        clang.waitUntilExit()
        guard clang.terminationStatus == 0 else {
            XCTFail("clang failed: \(said)", file: file, line: line)
            throw CocoaError(.fileWriteUnknown)
        }
        built[source] = modulePath
        return modulePath
    }

    /// A plugin whose `process` export runs `body` (C statements over `element`, `length`).
    static func plugin(_ body: String, extra: String = "", stateless: Bool = true) throws -> String {
        try build(
            """
            #include "rivulet.h"
            \(stateless ? "RIVULET_STATELESS()" : "")
            \(extra)
            RIVULET_EXPORT(process) int process(char *element, size_t length) {
            \(body)
            }
            """)
    }
}
