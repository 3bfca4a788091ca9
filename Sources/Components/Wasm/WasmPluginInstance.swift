import Foundation
@_spi(Components) import Pipeline
import WASI
// The store's resource limiter (the memory cap) is behind WasmKit's `Fuzzing` SPI in 0.4.
@_spi(Fuzzing) import WasmKit

/// How much one call into a module may use.
struct WasmPluginLimits {
    /// Fuel for one call: about one WebAssembly instruction a unit.
    var fuel: UInt64
    /// The most bytes its linear memory may grow to.
    var memoryBytes: Int
    /// The most elements one call may emit, and the most bytes they may take.
    var outputCount = 100_000
    var outputBytes = 64 << 20
    /// The most bytes a snapshot (`rivulet_snapshot`) may have: a checkpoint keeps it whole.
    var snapshotBytes = WasmPluginLimits.snapshotCeiling

    /// The ceilings of what a pipeline may give a module, checked by lint.
    static let fuelCeiling = 1_000_000_000
    static let memoryCeilingMiB = 1024
    static let snapshotCeiling = 64 << 20
}

/// One instance of a plugin module, checked against the ABI: elements go in as JSON bytes
/// written to the module's buffer, results come back through `rivulet.emit`, each call within
/// its fuel and the memory cap. Used on one thread at a time (the pipeline's).
final class WasmPluginInstance {
    /// The exports a module may have, and their types.
    enum Export {
        static let version = "rivulet_abi_version"
        static let buffer = "rivulet_buffer"
        static let initialize = "rivulet_init"
        static let snapshot = "rivulet_snapshot"
        static let restore = "rivulet_restore"
        static let stateless = "rivulet_stateless"
    }

    let plugin: WasmPluginModule
    let functionName: String
    private let limits: WasmPluginLimits
    private let store: Store
    private let instance: Instance
    private let memory: Memory
    private let wasi: LinkedWASI?
    private let bufferFunction: Function
    private let elementFunction: Function
    private var stack: ExecutionStack
    /// Where the module said the host may write, and how much.
    private var buffer: (address: UInt32, capacity: Int) = (0, 0)
    private let output: WasmPluginOutput
    private var scratch: [UInt8] = []
    /// Its calls, ended by the watch when the run is interrupted (none in lint and the fuzzer).
    private let calls: WasmCallWatch.Calls?

    /// Whether the module can hand its state over (`rivulet_snapshot` and `rivulet_restore`).
    let keepsState: Bool
    /// Whether the module says it keeps no state between elements (`rivulet_stateless`).
    let isStateless: Bool
    /// Whether it takes `config` (`rivulet_init`).
    let takesConfig: Bool

    /// Instantiates `plugin` and checks its exports and ABI version; `function` is the export
    /// each element is given to. A call still running once `isInterrupted` says so is ended.
    init(
        _ plugin: WasmPluginModule, function: String, limits: WasmPluginLimits, grants: WASIGrants,
        isInterrupted: (@Sendable () -> Bool)? = nil
    ) throws(WasmPluginError) {
        self.plugin = plugin
        self.functionName = function
        self.limits = limits
        // Eager: every function body is validated as the module is instantiated, so a module with
        // one that does not validate is refused by lint and never swapped in for a working one.
        let engine = Engine(configuration: EngineConfiguration(compilationMode: .eager, fuelMetering: true))
        store = Store(engine: engine)
        store.resourceLimiter = WasmMemoryCap(bytes: limits.memoryBytes)
        calls = isInterrupted.map { [store] in WasmCallWatch.shared.watch(store, isInterrupted: $0) }
        output = WasmPluginOutput(limits: limits)
        stack = ExecutionStack(engine: engine)
        var imports = Imports()
        output.define(in: &imports, store: store)
        let linked = plugin.importsWASI ? try grants.link(into: &imports, store: store) : nil
        wasi = linked
        do {
            // A start function runs within the same fuel as a call.
            store.fuel = Fuel(remaining: limits.fuel)
            instance = try plugin.module.instantiate(store: store, imports: imports)
        } catch {
            linked?.close()
            throw WasmPluginError("'\(plugin.path)' cannot be instantiated: \(Self.describe(error))")
        }
        let exports = Self.exportedFunctions(instance)
        let check = ExportCheck(path: plugin.path, exports: exports)
        do {
            guard case .memory(let memory) = instance.export("memory") else {
                throw WasmPluginError("'\(plugin.path)' exports no memory named 'memory'")
            }
            self.memory = memory
            // A module whose memory starts past the cap is refused by the cap as it is instantiated.
            output.memory = memory
            let version = try check.require(Export.version, [], [.i32])
            bufferFunction = try check.require(Export.buffer, [.i32], [.i32])
            elementFunction = try check.require(function, [.i32, .i32], [.i32], isElementFunction: true)
            keepsState = try check.handsStateOver()
            takesConfig = try check.optional(Export.initialize, [.i32, .i32], [.i32]) != nil
            isStateless = exports[Export.stateless] != nil
            store.fuel = Fuel(remaining: limits.fuel)
            try Self.checkVersion(version, of: plugin.path)
        } catch let error as WasmPluginError {
            linked?.close()
            throw error
        } catch {
            linked?.close()
            throw WasmPluginError("'\(plugin.path)': \(Self.describe(error))")
        }
    }

    deinit { wasi?.close() }

    /// Asks the module which plugin ABI it speaks (`rivulet_abi_version`): it must be this host's.
    private static func checkVersion(_ version: Function, of path: String) throws {
        let answer = try version.invoke([])
        var found: Int?
        if case .i32(let bits) = answer.first { found = Int(Int32(bitPattern: bits)) }
        guard found == WasmPluginModule.abiVersion else {
            throw WasmPluginError(
                "'\(path)' speaks plugin ABI version \(found.map(String.init) ?? "?"), "
                    + "this rivulet speaks version \(WasmPluginModule.abiVersion)",
                note: "rebuild the module with the rivulet.h of this version")
        }
    }

    /// Gives the module its `config` (`rivulet_init`), if it takes one.
    func initialize(config: Pipeline.Value?) throws(WasmPluginError) {
        guard takesConfig, let function = instance.exports[function: Export.initialize] else { return }
        scratch.removeAll(keepingCapacity: true)
        JSONSerializer.write(config ?? .null, to: &scratch)
        output.start(.discarding)
        try call(function, with: scratch, what: "its config")
    }

    /// The elements the module's function gives for `element`.
    func handle(_ element: Pipeline.Value) throws(WasmPluginError) -> [Pipeline.Value] {
        scratch.removeAll(keepingCapacity: true)
        JSONSerializer.write(element, to: &scratch)
        output.start(.elements)
        try call(elementFunction, with: scratch, what: "the element")
        return output.takeElements()
    }

    /// The module's state as bytes (`rivulet_snapshot`); nil if it keeps none across checkpoints.
    func snapshot() throws(WasmPluginError) -> [UInt8]? {
        guard keepsState, let function = instance.exports[function: Export.snapshot] else { return nil }
        output.start(.bytes)
        try call(function, with: nil, what: "its snapshot")
        return output.takeBytes()
    }

    /// Gives the module back a state its snapshot made (`rivulet_restore`).
    func restore(_ state: [UInt8]) throws(WasmPluginError) {
        guard keepsState, let function = instance.exports[function: Export.restore] else { return }
        output.start(.discarding)
        try call(function, with: state, what: "its restore")
    }

    /// Calls `function` with `input` written to the module's buffer (or with no arguments), within
    /// the limits; a status other than 0 is the module's error.
    private func call(_ function: Function, with input: [UInt8]?, what: String) throws(WasmPluginError) {
        var arguments: [WasmKit.Value] = []
        do {
            if let input {
                let address = try reserve(input.count)
                memory.withUnsafeMutableBufferPointer(offset: UInt(address), count: input.count) { target in
                    input.withUnsafeBytes { target.copyMemory(from: $0) }
                }
                arguments = [.i32(address), .i32(UInt32(input.count))]
            }
            store.fuel = Fuel(remaining: limits.fuel)
            let status =
                try calls?.run { try function.invoke(arguments, on: &stack) }
                ?? function.invoke(arguments, on: &stack)
            if case .i32(let code) = status.first, code != 0 {
                let message = output.errorMessage ?? "returned \(Int32(bitPattern: code))"
                throw WasmPluginError("the module failed on \(what): \(message)")
            }
            if let problem = output.problem { throw WasmPluginError(problem) }
        } catch let error as WasmPluginError {
            throw error
        } catch {
            if calls?.wasStopped == true {
                throw WasmPluginError(
                    "the run was stopped while the module worked on \(what)", brokeInstance: true, isStop: true)
            }
            throw WasmPluginError(Self.describe(error, limits: limits), brokeInstance: true)
        }
    }

    /// The address of a buffer of at least `count` bytes in the module's memory, asking the module
    /// for a bigger one when the last is too small.
    private func reserve(_ count: Int) throws -> UInt32 {
        if count <= buffer.capacity && buffer.address != 0 { return buffer.address }
        let capacity = max(count, 4096)
        store.fuel = Fuel(remaining: limits.fuel)
        guard case .i32(let address) = try bufferFunction.invoke([.i32(UInt32(capacity))], on: &stack).first,
            address != 0
        else { throw WasmPluginError("\(Export.buffer)(\(capacity)) gave no buffer", brokeInstance: true) }
        guard Int(address) + capacity <= memory.byteCount else {
            throw WasmPluginError(
                "\(Export.buffer)(\(capacity)) gave a buffer outside its memory (\(address)+\(capacity))",
                brokeInstance: true)
        }
        buffer = (address, capacity)
        return address
    }

    private static func exportedFunctions(_ instance: Instance) -> [String: Function] {
        var functions: [String: Function] = [:]
        for (name, value) in instance.exports {
            if case .function(let function) = value { functions[name] = function }
        }
        return functions
    }

    /// A trap or a host error as a line: WasmKit's trap text without its backtrace.
    static func describe(_ error: any Error, limits: WasmPluginLimits? = nil) -> String {
        if let error = error as? WasmPluginError { return error.message }
        let whole = WasmPluginError.plain(error)
        let text = whole.split(separator: "\n").first.map(String.init) ?? whole
        if text == "Trap: out of fuel", let limits {
            return "the module ran out of fuel (\(limits.fuel) units for one call; an endless loop?)"
        }
        if let memory = error as? WasmMemoryCap.Exceeded { return memory.description }
        if let exit = error as? WASIExitCode { return "the module exited (WASI proc_exit \(exit.code))" }
        return text.hasPrefix("Trap: ") ? "the module trapped: \(text.dropFirst(6))" : text
    }
}

/// Checks that a module's exports have the ABI's types.
private struct ExportCheck {
    let path: String
    let exports: [String: Function]

    func require(
        _ name: String, _ parameters: [ValueType], _ results: [ValueType], isElementFunction: Bool = false
    ) throws(WasmPluginError) -> Function {
        guard let function = try optional(name, parameters, results) else {
            let candidates = exports.keys.filter { !$0.hasPrefix("rivulet_") }.sorted()
            let note =
                isElementFunction
                ? (candidates.isEmpty
                    ? "it exports no element function"
                    : "it exports \(candidates.map { "'\($0)'" }.joined(separator: ", "))")
                : "every plugin exports \(WasmPluginInstance.Export.version) and \(WasmPluginInstance.Export.buffer); "
                    + "rivulet.h defines them"
            throw WasmPluginError("'\(path)' has no export '\(name)'", note: note)
        }
        return function
    }

    func optional(_ name: String, _ parameters: [ValueType], _ results: [ValueType]) throws(WasmPluginError)
        -> Function?
    {
        guard let function = exports[name] else { return nil }
        let expected = FunctionType(parameters: parameters, results: results)
        guard function.type == expected else {
            throw WasmPluginError(
                "'\(path)' exports '\(name)' as \(Self.spell(function.type)), the ABI needs \(Self.spell(expected))")
        }
        return function
    }

    /// Whether the module hands its state over: it exports both `rivulet_snapshot` and
    /// `rivulet_restore`, or neither.
    func handsStateOver() throws(WasmPluginError) -> Bool {
        typealias Export = WasmPluginInstance.Export
        let snapshot = try optional(Export.snapshot, [], [.i32])
        let restore = try optional(Export.restore, [.i32, .i32], [.i32])
        guard (snapshot == nil) == (restore == nil) else {
            throw WasmPluginError(
                "'\(path)' exports \(snapshot == nil ? Export.restore : Export.snapshot) without "
                    + "\(snapshot == nil ? Export.snapshot : Export.restore)",
                note: "a module hands its state over with both, or keeps none across checkpoints with neither")
        }
        return snapshot != nil
    }

    private static func spell(_ type: FunctionType) -> String {
        "(\(type.parameters.map { "\($0)" }.joined(separator: ", "))) -> (\(type.results.map { "\($0)" }.joined(separator: ", ")))"
    }
}

/// What a call emits: elements (JSON), bytes (a snapshot), or nothing kept; and the message of
/// `rivulet.error`.
final class WasmPluginOutput {
    enum Mode { case elements, bytes, discarding }

    private let limits: WasmPluginLimits
    private var mode = Mode.discarding
    private var elements: [Pipeline.Value] = []
    private var bytes: [UInt8] = []
    private var emittedBytes = 0
    /// What `rivulet.error` said during the call.
    private(set) var errorMessage: String?
    /// An emitted element that was no JSON: the call fails after it returns.
    private(set) var problem: String?

    init(limits: WasmPluginLimits) { self.limits = limits }

    func start(_ mode: Mode) {
        self.mode = mode
        elements.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        emittedBytes = 0
        errorMessage = nil
        problem = nil
    }

    func takeElements() -> [Pipeline.Value] {
        defer { elements = [] }
        return elements
    }

    func takeBytes() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    /// Defines `rivulet.emit` and `rivulet.error` for a store.
    func define(in imports: inout Imports, store: Store) {
        imports.define(
            module: WasmPluginModule.hostModule, name: "emit",
            Function(store: store, parameters: [.i32, .i32]) { [unowned self] caller, arguments, _ in
                try self.read(caller, arguments, what: "rivulet.emit") { try self.emit($0) }
            })
        imports.define(
            module: WasmPluginModule.hostModule, name: "error",
            Function(store: store, parameters: [.i32, .i32]) { [unowned self] caller, arguments, _ in
                try self.read(caller, arguments, what: "rivulet.error") { text in
                    self.errorMessage = String(decoding: text.prefix(4096), as: UTF8.self)
                }
            })
    }

    /// The instance's memory, once it is instantiated (a host function then need not look it up).
    var memory: Memory?

    /// Gives `body` the bytes at (address, length) of the calling instance's memory, after
    /// checking they lie inside it.
    private func read(
        _ caller: borrowing Caller, _ arguments: UnsafeBufferPointer<WasmKit.Value>, what: String,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let found: Memory?
        if let memory {
            found = memory
        } else if case .memory(let exported) = caller.instance?.export("memory") {
            found = exported
        } else {
            found = nil
        }
        guard arguments.count == 2, case .i32(let address) = arguments[0], case .i32(let length) = arguments[1],
            let memory = found
        else { throw WasmPluginError("\(what) was called without a memory", brokeInstance: true) }
        guard UInt64(address) + UInt64(length) <= UInt64(memory.byteCount) else {
            throw WasmPluginError(
                "the module called \(what) with bytes outside its memory (\(address)+\(length), "
                    + "memory \(memory.byteCount) bytes)", brokeInstance: true)
        }
        guard length > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        try memory.withUnsafeBufferPointer(offset: UInt(address), count: Int(length)) { try body($0) }
    }

    private func emit(_ text: UnsafeRawBufferPointer) throws {
        emittedBytes += text.count
        switch mode {
        case .discarding: return
        case .bytes:
            guard bytes.count + text.count <= limits.snapshotBytes else {
                throw WasmPluginError(
                    "the module's snapshot is larger than the \(limits.snapshotBytes >> 20) MiB a snapshot may have",
                    brokeInstance: true)
            }
            bytes.append(contentsOf: text)
            return
        case .elements: break
        }
        guard elements.count < limits.outputCount, emittedBytes <= limits.outputBytes else {
            throw WasmPluginError(
                "the module emitted more than \(limits.outputCount) elements or \(limits.outputBytes >> 20) MiB "
                    + "for one element", brokeInstance: true)
        }
        do {
            elements.append(try JSONParser.parse(text.bindMemory(to: UInt8.self)))
        } catch {
            let shown = String(decoding: text.prefix(80), as: UTF8.self)
            if problem == nil { problem = "the module emitted something that is not JSON (\(error)): \(shown)" }
        }
    }
}

/// The memory cap: a `memory.grow` past it stops the call.
final class WasmMemoryCap: ResourceLimiter {
    /// The error a call stops with.
    struct Exceeded: Error, CustomStringConvertible {
        let desired: Int
        let cap: Int
        var description: String {
            "the module's memory would grow to \(desired >> 20) MiB, past maxMemoryMiB (\(cap >> 20) MiB)"
        }
    }

    let bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    func limitMemoryGrowth(to desired: Int) throws -> Bool {
        guard desired <= bytes else { throw Exceeded(desired: desired, cap: bytes) }
        return true
    }

    func limitTableGrowth(to desired: Int) throws -> Bool { desired <= 1 << 20 }
}
