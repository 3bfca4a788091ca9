import Foundation
@_spi(Host) @_spi(Components) import Pipeline

@_spi(Host) @testable import Components

/// The `wasm` target: random modules through the loader, the ABI checks and a few calls, and
/// random elements through the example plugin. Nothing may crash, and fuel and a small memory cap
/// bound every call, so nothing may hang.
enum WasmFuzzTarget {
    private static let limits = WasmPluginLimits(fuel: 200_000, memoryBytes: 4 << 20)
    private static let elements: [Value] = [
        .null, 1, "text", ["user": "ana"], [1, 2, 3], .string(String(repeating: "x", count: 5000)),
    ]
    /// The example plugin, from the repository this was built in, given random elements.
    nonisolated(unsafe) private static let example: WasmPluginInstance? = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.appendingPathComponent("Examples/WasmPlugin/quota.wasm").path
        guard let module = try? WasmPluginModule.load(path, named: "quota.wasm"),
            let instance = try? WasmPluginInstance(module, function: "quota", limits: limits, grants: WASIGrants())
        else { return nil }
        try? instance.initialize(config: ["key": "user", "limit": 3])
        return instance
    }()

    static func run(_ bytes: [UInt8]) {
        guard bytes.starts(with: [0x00, 0x61, 0x73, 0x6D]) else {
            // Not a module: an element, given to the example plugin (and its state taken and given back).
            guard let element = try? JSONParser.parse(bytes), let example else { return }
            _ = try? example.handle(element)
            if let state = try? example.snapshot() { try? example.restore(state) }
            return
        }
        guard let module = try? WasmPluginModule.parse(bytes, named: "fuzz.wasm") else { return }
        for function in ["process", "quota"] {
            guard
                let instance = try? WasmPluginInstance(module, function: function, limits: limits, grants: WASIGrants())
            else { continue }
            try? instance.initialize(config: ["key": "user"])
            for element in elements {
                do {
                    _ = try instance.handle(element)
                } catch {
                    if error.brokeInstance { break }
                }
            }
            if let state = try? instance.snapshot() { try? instance.restore(state) }
        }
    }
}
