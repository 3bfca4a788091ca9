import Foundation
@_spi(Host) import PluginAPI

/// Loads Swift operator plugins with dlopen (never dlclose: their code and metadata stay in use).
enum PluginLoading {
    /// Loads the plugin at `path` into `registry`; returns the problem, or nil.
    static func load(_ path: String, into registry: ComponentRegistry) -> String? {
        let canonical = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        if registry.loadedPlugins.contains(canonical) { return nil }
        guard FileManager.default.fileExists(atPath: canonical) else { return "plugin file '\(path)' not found" }
        guard let handle = dlopen(canonical, RTLD_NOW | RTLD_LOCAL) else {
            return "cannot load plugin '\(path)': \(dlerror().map { String(cString: $0) } ?? "unknown error")"
        }
        if let problem = interfaceProblem(handle, path: path) { return problem }
        guard let registerSymbol = dlsym(handle, "rivulet_plugin_register") else {
            return "'\(path)' is not a Rivulet plugin: it has no rivulet_plugin_register entry point"
        }
        let registrar = PluginRegistrar(registry: registry, origin: path)
        let status = withExtendedLifetime(registrar) {
            unsafeBitCast(registerSymbol, to: (@convention(c) (UnsafeMutableRawPointer) -> Int32).self)(
                Unmanaged.passUnretained(registrar).toOpaque())
        }
        if let failure = registrar.failure { return "plugin '\(path)': \(failure)" }
        if status != 0 { return "plugin '\(path)' failed to register (status \(status))" }
        registry.loadedPlugins.insert(canonical)
        return nil
    }

    /// Why the plugin at `path` cannot run on this rivulet's core, if it cannot: it was built
    /// against another binary interface (a stale plugin would crash on a changed layout), or
    /// before plugins carried theirs.
    static func interfaceProblem(_ handle: UnsafeMutableRawPointer, path: String) -> String? {
        let ours = hexadecimal(PluginAPI.coreInterface)
        guard let symbol = dlsym(handle, "rivulet_plugin_interface") else {
            if dlsym(handle, "rivulet_plugin_api_version") != nil {
                return "plugin '\(path)' was built for an older rivulet (it numbers its plugin API instead of "
                    + "carrying its binary interface); rebuild the plugin against this rivulet (interface \(ours))"
            }
            return "'\(path)' is not a Rivulet plugin: it has no rivulet_plugin_interface entry point"
        }
        let theirs = unsafeBitCast(symbol, to: (@convention(c) () -> UInt64).self)()
        guard theirs == PluginAPI.coreInterface else {
            return "plugin '\(path)' was built against another build of rivulet's core (binary interface "
                + "\(hexadecimal(theirs)); this rivulet's is \(ours)): rebuild the plugin against this rivulet, "
                + "from an empty build folder (an incremental build keeps the old identifier when only inlined code changed)"
        }
        return nil
    }

    private static func hexadecimal(_ identifier: UInt64) -> String {
        let digits = String(identifier, radix: 16)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}
