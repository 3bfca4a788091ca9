import Foundation
import Reactive
import Synchronization
import WasmKit

/// Ends a call into a module that is still running when the run is interrupted (SIGINT, SIGTERM):
/// without it a stop waited for the call, up to its whole fuel (an endless loop with a billion
/// units took minutes, and needed SIGKILL).
///
/// WasmKit has no interrupt. Its fuel is a counter the interpreter charges through its address
/// before each stretch of code, so emptying it from another thread makes the call trap at its next
/// charge. A charge is a read and a write, and one under way can put back what was read, so the
/// watch empties the fuel again every 20 ms until the call has ended.
final class WasmCallWatch: @unchecked Sendable {
    /// One instance's calls: whether one is running, and how to tell that the run was interrupted.
    final class Calls: @unchecked Sendable {
        fileprivate let store: Store
        fileprivate let isInterrupted: @Sendable () -> Bool
        fileprivate let running = Atomic<Bool>(false)
        private let emptied = Atomic<Bool>(false)

        fileprivate init(store: Store, isInterrupted: @escaping @Sendable () -> Bool) {
            self.store = store
            self.isInterrupted = isInterrupted
        }

        /// Runs `call` as one the watch may stop.
        func run<Result>(_ call: () throws -> Result) rethrows -> Result {
            running.store(true, ordering: .sequentiallyConsistent)
            defer { running.store(false, ordering: .sequentiallyConsistent) }
            return try call()
        }

        /// Whether the watch emptied the fuel: a call's trap is then a stop, not the module's fault.
        var wasStopped: Bool { emptied.load(ordering: .sequentiallyConsistent) }

        fileprivate func stopIfInterrupted() {
            guard running.load(ordering: .sequentiallyConsistent), isInterrupted() else { return }
            emptied.store(true, ordering: .sequentiallyConsistent)
            store.fuel = Fuel(remaining: 0)
        }
    }

    /// The watch every instance shares: one thread, running while any instance lives.
    static let shared = WasmCallWatch()

    private struct Watched {
        weak var calls: Calls?
    }

    private let lock = NSLock()
    private var watched: [ObjectIdentifier: Watched] = [:]
    private var watching = false

    /// Watches the calls made on `store`, stopped once `isInterrupted` says so.
    func watch(_ store: Store, isInterrupted: @escaping @Sendable () -> Bool) -> Calls {
        let calls = Calls(store: store, isInterrupted: isInterrupted)
        let start = lock.withLock {
            watched[ObjectIdentifier(calls)] = Watched(calls: calls)
            defer { watching = true }
            return !watching
        }
        if start { Thread { self.loop() }.start() }
        return calls
    }

    private func loop() {
        while true {
            // A stop is polled, not waited for: the run's interruption flag has no observers.
            _ = poll(nil, 0, 20)
            let live: [Calls]? = lock.withLock {
                watched = watched.filter { $0.value.calls != nil }
                guard !watched.isEmpty else {
                    watching = false
                    return nil
                }
                return watched.values.compactMap(\.calls)
            }
            guard let live else { return }
            for calls in live { calls.stopIfInterrupted() }
        }
    }
}

/// Whether the pipeline's run was interrupted, asked from the watch's thread: a scheduler is used
/// on its own thread, but its interruption is an atomic flag, safe to read from any.
struct SchedulerInterruption: @unchecked Sendable {
    private let scheduler: any SchedulerType

    init(_ scheduler: any SchedulerType) { self.scheduler = scheduler }

    var isInterrupted: Bool { scheduler.isInterrupted }
}
