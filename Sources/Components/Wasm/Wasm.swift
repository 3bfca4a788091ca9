import Foundation
import Pipeline
import Reactive

private enum Key {
    static let module = Parameter<String>(
        "module", doc: "The WebAssembly module (.wasm), relative to the pipeline file.", example: "./quota.wasm")
    static let function = Parameter<String>(
        "function", default: "process", doc: "The exported function each element is given to.", example: "quota")
    static let config = Parameter<Value?>(
        "config", doc: "A value given once to the module's rivulet_init, as JSON.", example: "{ key: user, limit: 100 }"
    )
    static let environment = Parameter<[String]>(
        "env", default: [], doc: "Environment variables the module may read (those set).", example: "[LANG]")
    static let read = Parameter<[String]>(
        "read", default: [], doc: "Directories the module may read (never write), under the path written here.",
        example: "[./data]")
    static let standardError = Parameter<Bool>(
        "stderr", default: false, doc: "Whether the module's standard output and error go to rivulet's standard error.")
    static let wasi = Parameter<ParameterValues?>.object(
        "wasi", [environment, read, standardError], doc: "What of the host the module may reach through WASI.",
        example: "{ env: [LANG], read: [./data] }")
    static let fuel = Parameter<Int>(
        "fuel", default: 100_000_000,
        doc:
            "The fuel of one call (about one WebAssembly instruction a unit), at most 1000000000; a call that runs out fails its element."
    ).atLeast(1000)
    static let maxMemory = Parameter<Int>(
        "maxMemoryMiB", default: 64,
        doc: "The most memory (MiB) the module may grow to, at most 1024; growing past it fails the element."
    ).atLeast(1)
}

extension BuiltinComponents {
    /// `wasm: {module: PATH.wasm, function: NAME}` — a WebAssembly operator plugin.
    public static let wasm = ComponentSpec(
        name: "wasm",
        summary: "Passes each element through a WebAssembly module's function, which emits zero, one or many elements.",
        docs: """
            A plugin compiled once to WebAssembly (from C, Rust, Zig...), run sandboxed in rivulet's own \
            interpreter: it sees only the element (JSON in its memory), its config, and what wasi grants. \
            Each element is written to the module's buffer and its function called; it emits any number \
            of elements (rivulet.emit, JSON) and returns 0, or calls rivulet.error and returns non-zero. A \
            trap, a call past its fuel, memory grown past maxMemoryMiB or a bad pointer fail the element \
            as onError says (fail stops the run; skip and errors drop the element and go on), and the \
            instance is replaced by a fresh one (its own state restarts empty); the runner never \
            crashes or hangs. A stop (SIGTERM, Ctrl-C) ends a running call within about 20 ms; its element \
            is not failed, skipped or acknowledged. A module that exports rivulet_snapshot and rivulet_restore keeps its state \
            in checkpoints (--state) and across a hot swap under run --watch, where a changed .wasm file \
            is loaded between two elements (one that does not load leaves the old one running). The ABI \
            (version 1) and a C header are in docs/plugins.md.
            """,
        parameters: [Key.module, Key.function, Key.config, Key.wasi, Key.fuel, Key.maxMemory],
        primary: Key.module,
        example: "- wasm: { module: ./quota.wasm, function: quota, config: { key: user, limit: 100 } }",
        validate: { values, validation in WasmOperator.validate(values, validation) },
        checkpointing: .keepsState(
            "the module's state through its rivulet_snapshot and rivulet_restore (a module without them restarts empty)"
        ),
        elementErrors: true,
        factory: .operator { parameters, context in WasmOperator(parameters, context).build() })
}

/// The `wasm` operator built from its parameters: one plugin instance per subscription.
struct WasmOperator {
    let modulePath: String
    let writtenPath: String
    let function: String
    let config: Value?
    let limits: WasmPluginLimits
    let grants: WASIGrants
    let context: ComponentContext

    init(_ parameters: ParameterValues, _ context: ComponentContext) {
        writtenPath = parameters[Key.module]
        modulePath = context.resolvePath(writtenPath)
        function = parameters[Key.function]
        config = parameters[Key.config]
        limits = Self.limits(parameters)
        grants = Self.grants(parameters, resolve: context.resolvePath)
        self.context = context
    }

    static func limits(_ parameters: ParameterValues) -> WasmPluginLimits {
        WasmPluginLimits(fuel: UInt64(parameters[Key.fuel]), memoryBytes: parameters[Key.maxMemory] << 20)
    }

    static func grants(_ parameters: ParameterValues, resolve: (String) -> String) -> WASIGrants {
        guard let wasi = parameters[Key.wasi] else { return WASIGrants() }
        return WASIGrants(
            environment: wasi[Key.environment],
            readable: wasi[Key.read].map { written in
                var guest = written
                while guest.hasPrefix("./") { guest.removeFirst(2) }
                return (guest.isEmpty ? "." : guest, resolve(written))
            },
            standardError: wasi[Key.standardError])
    }

    /// Loads and checks the module as `lint` does: every problem at the value it is about.
    static func validate(_ values: ParameterValues, _ validation: ComponentValidation) {
        // A stop ends a running call (WasmCallWatch); the ceiling bounds how long one element may
        // hold the pipeline's thread.
        if values[Key.fuel] > WasmPluginLimits.fuelCeiling {
            validation.error(
                "fuel is \(values[Key.fuel]), more than the \(WasmPluginLimits.fuelCeiling) one call may have",
                at: Key.fuel,
                in: values, note: "a call of that much fuel runs for a minute or more, holding the pipeline's thread")
            return
        }
        if values[Key.maxMemory] > WasmPluginLimits.memoryCeilingMiB {
            validation.error(
                "maxMemoryMiB is \(values[Key.maxMemory]), more than the \(WasmPluginLimits.memoryCeilingMiB) a module may have",
                at: Key.maxMemory, in: values)
            return
        }
        if let wasi = values[Key.wasi] {
            for (index, directory) in wasi[Key.read].enumerated() {
                var isDirectory: ObjCBool = false
                if !FileManager.default.fileExists(atPath: validation.resolvePath(directory), isDirectory: &isDirectory)
                    || !isDirectory.boolValue
                {
                    validation.error(
                        "wasi.read: '\(directory)' is not a directory", at: Key.wasi, item: index, in: values,
                        note: "looked for \(validation.resolvePath(directory))")
                    return
                }
            }
        }
        let written = values[Key.module]
        let instance: WasmPluginInstance
        do {
            let module = try WasmPluginModule.load(validation.resolvePath(written), named: written)
            instance = try WasmPluginInstance(
                module, function: values[Key.function], limits: limits(values),
                grants: grants(values, resolve: validation.resolvePath))
        } catch {
            // At `module:`, whatever is wrong with it (a missing element function included).
            validation.error(error.message, at: Key.module, in: values, note: error.note)
            return
        }
        if values[Key.config] != nil && !instance.takesConfig {
            validation.error(
                "'\(written)' takes no config: it exports no \(WasmPluginInstance.Export.initialize)", at: Key.config,
                in: values)
        }
        if !instance.keepsState && !instance.isStateless {
            validation.warning(
                "'\(written)' exports neither \(WasmPluginInstance.Export.snapshot)/\(WasmPluginInstance.Export.restore) "
                    + "nor \(WasmPluginInstance.Export.stateless): under --state a resumed run starts it empty",
                at: Key.module, in: values,
                note: "export snapshot and restore to keep its state, or rivulet_stateless if it keeps none")
        }
    }

    /// The operator: each subscription runs its own instance.
    func build() -> PipelineOperator {
        let state = context.operatorState()
        return { [weak state] source in
            Observable.deferred {
                let plugin = try WasmPluginRun(self)
                if let restored = state?.takeRestored() { try plugin.restore(restored) }
                return expandingEach(
                    source, started: { state?.keep({ plugin.snapshot() }, origins: { [] }, until: $0) }, plugin.handle)
            }
        }
    }
}
