import Foundation
import Pipeline
import RivuletTestSupport
import Synchronization
import XCTest

@testable import Components

/// A call into a module still running when the run is interrupted is ended by the watch, and is
/// said to be a stop, not the module's fault; an uninterrupted call keeps its fuel.
final class WasmCallWatchTests: LeakCheckingTestCase {
    private func endlessLoop(isInterrupted: (@Sendable () -> Bool)?) throws -> WasmPluginInstance {
        let path = try WasmTestModules.plugin("for (volatile int spin = 0;; spin++) {}")
        return try WasmPluginInstance(
            WasmPluginModule.load(path, named: "loop.wasm"), function: "process",
            limits: WasmPluginLimits(fuel: UInt64(WasmPluginLimits.fuelCeiling), memoryBytes: 64 << 20),
            grants: WASIGrants(), isInterrupted: isInterrupted)
    }

    func testACallRunningWhenTheRunIsInterruptedEndsWithinAFractionOfASecond() throws {
        let interrupted = Atomic<Bool>(false)
        let instance = try endlessLoop(isInterrupted: { interrupted.load(ordering: .relaxed) })
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { interrupted.store(true, ordering: .relaxed) }
        let started = Date()
        XCTAssertThrowsError(try instance.handle(.int(1))) { error in
            let failure = error as? WasmPluginError
            XCTAssertEqual(failure?.isStop, true)
            XCTAssertEqual(failure?.message, "the run was stopped while the module worked on the element")
        }
        let seconds = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(seconds, 0.15, "it ran until the interruption")
        XCTAssertLessThan(seconds, 1.5, "a billion units of fuel would take far longer")
    }

    func testWithoutAnInterruptionTheFuelEndsTheCallAsTheModulesFault() throws {
        let path = try WasmTestModules.plugin("for (volatile int spin = 0;; spin++) {}")
        let instance = try WasmPluginInstance(
            WasmPluginModule.load(path, named: "loop.wasm"), function: "process",
            limits: WasmPluginLimits(fuel: 1_000_000, memoryBytes: 64 << 20), grants: WASIGrants(),
            isInterrupted: { false })
        XCTAssertThrowsError(try instance.handle(.int(1))) { error in
            let failure = error as? WasmPluginError
            XCTAssertEqual(failure?.isStop, false)
            XCTAssertEqual(
                failure?.message, "the module ran out of fuel (1000000 units for one call; an endless loop?)")
        }
    }
}
