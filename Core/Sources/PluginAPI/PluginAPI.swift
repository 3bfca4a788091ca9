@_exported import Pipeline
@_spi(Host) @_spi(Components) import Pipeline
@_exported import Reactive

/// The surface operator plugins build against: what a plugin registers and how.
///
/// A plugin is a dynamic library (a SwiftPM `.dynamic` product depending on the `RivuletCore`
/// product) with two C entry points:
///
/// ```swift
/// import PluginAPI
///
/// @_cdecl("rivulet_plugin_interface")
/// public func rivuletPluginInterface() -> UInt64 { PluginAPI.binaryInterface }
///
/// @_cdecl("rivulet_plugin_register")
/// public func rivuletPluginRegister(_ registrar: UnsafeMutableRawPointer) -> Int32 {
///     PluginRegistrar.from(registrar).register(mySpec)
///     return 0
/// }
/// ```
///
/// Operators are `ComponentSpec`s, exactly like the built-in ones: name, typed parameters
/// (`Parameter<T>`), docs, an example, an optional `validate` step, and a factory from an
/// observable of values to an observable of values.
///
/// What a plugin sees: the runtime (`Observable` and its operators, events, observers,
/// lifetimes and disposables, schedulers, subjects), `Value` and JSON, expressions and templates,
/// the component and parameter declarations, the component context, and the registrar. The rest
/// of the core (the loader, validator, compiler, YAML, diagnostics, the registry) is marked
/// `@_spi(Host)`: `rivulet` itself uses it, plugins cannot. The surface is recorded, one
/// declaration a line, in `Core/PluginAPI.digest`, and the binary interface a built plugin
/// depends on (layouts, symbols, inlined bodies) as a digest, `binaryInterface`; CI fails when
/// either is out of date (`make plugin-api` writes both).
public enum PluginAPI {
    /// The binary interface of the core library loaded in this process: `binaryInterface` as the
    /// core itself was compiled with it. The host compares a plugin's with this one, never with a
    /// copy inlined into its own code (an incremental build may keep a stale inlined copy).
    @_spi(Host) public static var coreInterface: UInt64 { binaryInterface }
}

/// What a plugin registers its components with while it is loaded.
public final class PluginRegistrar {
    private let registry: ComponentRegistry
    private let origin: String
    /// The names registered so far.
    public private(set) var registered: [String] = []
    /// The first problem met (a name already taken), if any.
    public private(set) var failure: String?

    /// A registrar adding to `registry`, naming `origin` (the plugin's path) as the source.
    @_spi(Host) public init(registry: ComponentRegistry, origin: String) {
        self.registry = registry
        self.origin = origin
    }

    /// The registrar `rivulet` passed to the plugin's entry point.
    public static func from(_ pointer: UnsafeMutableRawPointer) -> PluginRegistrar {
        Unmanaged<PluginRegistrar>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Registers a component; a name already taken is recorded as the failure.
    public func register(_ spec: ComponentSpec) {
        do {
            try registry.register(spec, origin: origin)
            registered.append(spec.name)
        } catch {
            if failure == nil { failure = "\(error)" }
        }
    }
}
