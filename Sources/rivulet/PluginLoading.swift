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
        guard let versionSymbol = dlsym(handle, "rivulet_plugin_api_version") else {
            return "'\(path)' is not a Rivulet plugin: it has no rivulet_plugin_api_version entry point"
        }
        let version = unsafeBitCast(versionSymbol, to: (@convention(c) () -> Int32).self)()
        guard version == PluginAPI.version else {
            return
                "plugin '\(path)' was built against plugin API \(version), but this rivulet has version \(PluginAPI.version); rebuild the plugin"
        }
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
}
