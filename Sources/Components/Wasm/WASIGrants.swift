import Foundation
import WASI
import WasmKit
import WasmKitWASI

/// What of the host a `wasm` module may reach through WASI: nothing unless the pipeline file
/// grants it. Environment variables by name, directories to read (never to write), and standard
/// error. Clocks, randomness, polling and sockets are never linked (a module asking gets ENOSYS):
/// time comes from the pipeline's clock, and nothing may make the pipeline's thread wait.
struct WASIGrants {
    /// The environment variables the module sees (those set in rivulet's environment).
    var environment: [String] = []
    /// The directories the module may read, each as (written, resolved): the module sees it
    /// under the path written in the pipeline file.
    var readable: [(guestPath: String, hostPath: String)] = []
    /// Whether what the module writes to its standard output and error goes to rivulet's
    /// standard error (otherwise it is thrown away).
    var standardError = false

    /// The WASI functions that change the file system, refused with ENOTCAPABLE: a granted
    /// directory is read-only.
    static let refused: Set<String> = [
        "path_create_directory", "path_remove_directory", "path_rename", "path_unlink_file", "path_symlink",
        "path_link", "path_filestat_set_times", "fd_filestat_set_size", "fd_filestat_set_times", "fd_allocate",
    ]
    /// WASI's errno ENOTCAPABLE.
    private static let notCapable: Int32 = 76
    private static let refusedOpenFlags: UInt32 = 1 | 4 | 8  // creat, excl, trunc
    private static let appendFlag: UInt32 = 1
    private static let writeRights: UInt64 = (1 << 6) | (1 << 8) | (1 << 22)  // fd_write, fd_allocate, set_size

    /// Links WASI preview 1 into `imports` with only these grants. What it returns must be
    /// closed when the instance is let go of.
    func link(into imports: inout Imports, store: Store) throws(WasmPluginError) -> LinkedWASI {
        let input = open("/dev/null", O_RDONLY)
        let output = standardError ? STDERR_FILENO : open("/dev/null", O_WRONLY)
        let owned = standardError ? [input] : [input, output]
        let bridge: WASIBridgeToHost
        do {
            let variables = ProcessInfo.processInfo.environment
            bridge = try WASIBridgeToHost(
                args: ["wasm"],
                environment: Dictionary(
                    uniqueKeysWithValues: environment.compactMap { name in
                        variables[name].map { (name, $0) }
                    }),
                preopens: readable.map { WASIBridgeToHost.Preopen(guestPath: $0.guestPath, hostPath: $0.hostPath) },
                stdin: input, stdout: output, stderr: output)
        } catch {
            for descriptor in owned { close(descriptor) }
            throw WasmPluginError("cannot give the module its WASI grants: \(error)")
        }
        // Not `poll`: poll_oneoff with a clock would sleep on the pipeline's thread, past any fuel.
        let capabilities: [WasmKitWASI.WASICapability] = [.environment, .stdio, .fileSystem, .process]
        for (name, function) in bridge.hostFunctions(capabilities: capabilities) {
            imports.define(
                module: WasmPluginModule.wasiModule, name: name,
                Function(store: store, type: function.type, body: Self.guarded(name, function)))
        }
        return LinkedWASI(bridge: bridge, descriptors: owned)
    }

    /// `function` as the module may call it: a call that would write is refused.
    private static func guarded(_ name: String, _ function: WASIHostFunction<Memory>) -> Function.Implementation {
        let call: Function.Implementation = { caller, arguments in
            guard case .memory(let memory) = caller.instance?.export("memory") else {
                throw WasmPluginError("the module exports no memory", brokeInstance: true)
            }
            return try function.implementation(memory, arguments)
        }
        if refused.contains(name) { return { _, _ in [.i32(UInt32(bitPattern: notCapable))] } }
        switch name {
        case "fd_write", "fd_pwrite":
            // Standard output and error (1, 2) go where the grants say; no other descriptor is
            // writable.
            return { caller, arguments in
                guard case .i32(let descriptor) = arguments.first, descriptor <= 2 else {
                    return [.i32(UInt32(bitPattern: notCapable))]
                }
                return try call(caller, arguments)
            }
        case "path_open":
            return { caller, arguments in
                guard arguments.count == 9, case .i32(let openFlags) = arguments[4],
                    case .i64(let base) = arguments[5], case .i64(let inheriting) = arguments[6],
                    case .i32(let descriptorFlags) = arguments[7]
                else { return try call(caller, arguments) }
                if openFlags & refusedOpenFlags != 0 || descriptorFlags & appendFlag != 0 {
                    return [.i32(UInt32(bitPattern: notCapable))]
                }
                var readOnly = arguments
                readOnly[5] = .i64(base & ~writeRights)
                readOnly[6] = .i64(inheriting & ~writeRights)
                return try call(caller, readOnly)
            }
        default:
            return call
        }
    }
}

/// WASI as linked into one instance: the bridge and the descriptors it borrows.
final class LinkedWASI {
    private let bridge: WASIBridgeToHost
    private var descriptors: [Int32]

    init(bridge: WASIBridgeToHost, descriptors: [Int32]) {
        self.bridge = bridge
        self.descriptors = descriptors
    }

    /// Closes what the module opened and the borrowed descriptors; once.
    func close() {
        try? bridge.close()
        for descriptor in descriptors { _ = Foundation.close(descriptor) }
        descriptors = []
    }

    deinit { close() }
}
