import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// Given to a run under `rivulet run --watch`: its `wasm` operators look, between elements and
/// at most every quarter second of the pipeline's clock, for a changed module file, and swap it in.
public final class WasmHotSwap {
    /// How often a module file is looked at.
    static let interval = RxTimeInterval.milliseconds(250)

    /// A run that swaps changed modules in.
    public init() {}
}

/// One subscription's plugin: the instance now (replaced after one breaks, or by a changed module
/// under --watch), element errors routed by `onError`, and the state as a checkpoint keeps it
/// (base64 of the module's bytes).
final class WasmPluginRun {
    private let setup: WasmOperator
    private var instance: WasmPluginInstance?
    /// The last snapshot taken: what a checkpoint keeps if the instance was replaced since.
    private var lastState: Value?
    /// Under --watch: the module file as last loaded, and when to look at it next.
    private let swapsModules: Bool
    private var loadedFile: FileStamp?
    private var nextLook = RxTime.zero

    init(_ setup: WasmOperator) throws {
        self.setup = setup
        swapsModules = setup.context.existing(WasmHotSwap.self) != nil
        loadedFile = FileStamp(setup.modulePath)
        instance = try setup.context.failing { try start() }
        nextLook = setup.context.scheduler.now + WasmHotSwap.interval
    }

    private func start() throws(WasmPluginError) -> WasmPluginInstance {
        let module = try WasmPluginModule.load(setup.modulePath, named: setup.writtenPath)
        let interruption = SchedulerInterruption(setup.context.scheduler)
        let instance = try WasmPluginInstance(
            module, function: setup.function, limits: setup.limits, grants: setup.grants,
            isInterrupted: { interruption.isInterrupted })
        try instance.initialize(config: setup.config)
        return instance
    }

    /// The elements the module gives for `element`; none when it failed and onError dropped it.
    func handle(_ element: Value) throws -> [Value] {
        if swapsModules { swapIfChanged() }
        let current = try instance ?? setup.context.failing { try start() }
        instance = current
        do {
            return try current.handle(element)
        } catch {
            if error.brokeInstance {
                // Its memory may be half way through the element: a fresh instance takes the next
                // one, and a checkpoint keeps no state of the broken one.
                instance = nil
                lastState = nil
            }
            // Stopped by a signal: the element is not failed (nor skipped, nor acknowledged).
            if error.isStop { throw setup.context.error(error.message, element: element) }
            try setup.context.elementFailed(setup.context.error(error.message, element: element), element: element)
            return []
        }
    }

    /// Under --watch: loads the module file if it changed since it was loaded, hands the old
    /// instance's state to the new one when both can, and swaps it in; one that does not load
    /// leaves the old one running.
    private func swapIfChanged() {
        let now = setup.context.scheduler.now
        guard now >= nextLook else { return }
        nextLook = now + WasmHotSwap.interval
        let file = FileStamp(setup.modulePath)
        guard let file, file != loadedFile else { return }
        loadedFile = file
        let context = setup.context
        do {
            let replacement = try start()
            var handedOver = false
            if let old = instance, old.keepsState && replacement.keepsState, let state = try old.snapshot() {
                try replacement.restore(state)
                handedOver = true
            }
            instance = replacement
            context.log(
                "loaded the changed module '\(setup.writtenPath)'"
                    + (handedOver ? "; the old one's state handed over" : "; it starts empty"))
        } catch {
            context.log(
                "the changed module '\(setup.writtenPath)' cannot be swapped in: \(error.message); the old one goes on",
                level: .warning)
        }
    }

    /// Gives the module the state a checkpoint kept.
    func restore(_ state: Value) throws {
        guard case .string(let text) = state, let bytes = Data(base64Encoded: text) else {
            throw setup.context.error("the checkpoint's state of '\(setup.writtenPath)' is not the module's")
        }
        try setup.context.failing { try instance?.restore([UInt8](bytes)) }
        lastState = state
    }

    /// The module's state for a checkpoint; nil if it keeps none.
    func snapshot() -> Value? {
        guard let instance else { return lastState }
        do {
            guard let bytes = try instance.snapshot() else { return nil }
            lastState = .string(Data(bytes).base64EncodedString())
        } catch {
            setup.context.log("\(error.message); the checkpoint keeps its last state", level: .warning)
        }
        return lastState
    }
}

extension ComponentContext {
    /// `body`'s result, a plugin error turned into this component's run error.
    fileprivate func failing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as WasmPluginError {
            throw self.error(error.message)
        }
    }
}

/// What tells a file's versions apart: inode, size and modification time.
struct FileStamp: Equatable {
    let inode: UInt64
    let size: Int64
    let modified: Int64

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }
}
