import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How a run is stopped from outside it: by a signal (the process then ends) or, under
/// `--watch`, to be replaced by a new version of its file. The run installs what stops it; a stop
/// asked for before it is installed happens as soon as it is.
final class RunControl<Replacement>: @unchecked Sendable {
    private let lock = NSLock()
    private var stopAction: (@Sendable () -> Void)?
    private var stopRequested = false
    private var pending: Replacement?
    private let wake = DispatchSemaphore(value: 0)

    /// The run that is starting: `action` stops it (at once, if a stop is already asked for).
    func install(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        let stopNow = stopRequested
        stopAction = action
        lock.unlock()
        if stopNow { action() }
    }

    /// The run has ended: nothing to stop until the next one.
    func uninstall() {
        lock.lock()
        stopAction = nil
        lock.unlock()
    }

    /// A signal: stops the run there is, and any wait for a new version.
    func stop() {
        lock.lock()
        stopRequested = true
        let action = stopAction
        lock.unlock()
        action?()
        wake.signal()
    }

    /// A valid new version: stops the run there is, so that `next` hands the new one over.
    func replace(with replacement: Replacement) {
        lock.lock()
        pending = replacement
        stopRequested = true
        let action = stopAction
        lock.unlock()
        action?()
        wake.signal()
    }

    /// Whether a new version waits to be run.
    var hasReplacement: Bool {
        lock.lock()
        defer { lock.unlock() }
        return pending != nil
    }

    /// The new version to run (waiting for one if `wait`), or nil after a signal.
    func next(wait: Bool) -> Replacement? {
        while true {
            lock.lock()
            if SignalWatcher.received != nil {
                lock.unlock()
                return nil
            }
            if let replacement = pending {
                pending = nil
                stopRequested = false
                lock.unlock()
                return replacement
            }
            lock.unlock()
            if !wait { return nil }
            wake.wait()
        }
    }
}

/// Watches files for changes by polling their size, time and inode four times a second (editors
/// that save by renaming a new file over the old are seen too), and calls `changed` on its
/// own thread once per change.
final class FileWatcher: @unchecked Sendable {
    private struct Stamp: Equatable {
        var inode: UInt64
        var size: Int64
        var modified: Int64
    }

    private let paths: () -> [String]
    private let changed: @Sendable () -> Void

    /// Starts watching the files `paths` lists (asked again each time: a test folder may gain files).
    init(paths: @escaping () -> [String], changed: @escaping @Sendable () -> Void) {
        self.paths = paths
        self.changed = changed
        let first = Self.stamps(paths())
        let thread = Thread { [self] in
            var last = first
            while true {
                usleep(250_000)
                let now = Self.stamps(self.paths())
                if now != last {
                    last = now
                    self.changed()
                }
            }
        }
        thread.start()
    }

    private static func stamps(_ paths: [String]) -> [String: Stamp] {
        var result: [String: Stamp] = [:]
        for path in paths {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            result[path] = Stamp(
                inode: UInt64(status.st_ino), size: Int64(status.st_size),
                modified: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec))
        }
        return result
    }
}

/// A value used from several threads, one at a time (the pipeline loader, which the file watcher
/// and SIGHUP both call under --watch).
final class Serialized<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func with<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// An action known only later (what SIGHUP does, once the pipeline is loaded); calls before it is
/// set do nothing.
final class LateAction: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?

    func set(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        self.action = action
        lock.unlock()
    }

    @Sendable func call() {
        lock.lock()
        let action = self.action
        lock.unlock()
        action?()
    }
}
