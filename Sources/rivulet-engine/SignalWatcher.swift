import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A command that acts on SIGINT and SIGTERM itself (an orderly stop, a terminal given back). Any
/// other command gets their default action back once its arguments are parsed.
protocol HandlesStopSignals {
    /// Whether this invocation does (`test` only with `--watch`, say).
    var handlesStopSignals: Bool { get }
}

/// Turns SIGINT and SIGTERM into an orderly stop: the signals are blocked in every thread and a
/// dedicated thread waits for them with sigwait, then asks the pipeline to stop on its own thread,
/// so sinks flush and close and the terminal is restored. No work happens in a signal handler.
enum SignalWatcher {
    nonisolated(unsafe) private static var receivedSignal: Int32 = 0
    private static let lock = NSLock()

    /// The signal that stopped the run, if one did.
    static var received: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return receivedSignal == 0 ? nil : receivedSignal
    }

    /// SIGINT and SIGTERM, the signals a run handles itself.
    private static var handled: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }

    /// The stop signal waiting to be taken, if one is (taken by this call), without waiting: for
    /// commands that poll, such as `top`.
    static func takePendingStopSignal() -> Int32? {
        var set = handled
        var none = timespec(tv_sec: 0, tv_nsec: 0)
        let signal = sigtimedwait(&set, nil, &none)
        return signal > 0 ? signal : nil
    }

    /// Blocks SIGINT and SIGTERM in this thread and the threads it starts later. Call first thing.
    /// (The executable has them blocked already before any initialiser runs, by CEarlySignals, so
    /// a signal sent while the process starts is not lost to the default action.)
    static func blockSignals() {
        var set = handled
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Gives SIGINT and SIGTERM back their default action (end the process): for commands that
    /// have nothing to flush, such as `tap`.
    static func unblockSignals() {
        var set = handled
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Blocks SIGHUP as well (for `--watch`, where it means "read the file again"). Call before
    /// any thread starts.
    static func blockHangUp() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts the thread that waits for a signal and then calls `stop` (once); with `hangUp`,
    /// each SIGHUP calls it instead (after `blockHangUp`). With `giveUpAfter`, a process still
    /// running that long after the signal exits anyway (128 + the signal): whatever holds the
    /// stop (a sink's commit waiting on a locked database, a server that does not answer), a
    /// signal is honoured within the drain timeout and a little more.
    static func start(
        hangUp: (@Sendable () -> Void)? = nil, giveUpAfter: Duration? = nil, _ stop: @escaping @Sendable () -> Void
    ) {
        let thread = Thread {
            var set = handled
            if hangUp != nil { sigaddset(&set, SIGHUP) }
            var signal: Int32 = 0
            while true {
                guard sigwait(&set, &signal) == 0 else { return }
                guard signal == SIGHUP, let hangUp else { break }
                hangUp()
            }
            sigdelset(&set, SIGHUP)
            lock.lock()
            receivedSignal = signal
            lock.unlock()
            stop()
            // A second signal while stopping ends the process at once, as users expect.
            guard let giveUpAfter else {
                var again: Int32 = 0
                if sigwait(&set, &again) == 0 { _exit(128 + again) }
                return
            }
            let seconds = giveUpAfter.components.seconds
            var limit = timespec(tv_sec: Int(seconds), tv_nsec: Int(giveUpAfter.components.attoseconds / 1_000_000_000))
            let again = sigtimedwait(&set, nil, &limit)
            if again > 0 { _exit(128 + again) }
            FileHandleOutput.standardError.write(
                "rivulet: still stopping \(seconds)s after the signal (the drain timeout and 5s more); exiting now\n")
            _exit(128 + signal)
        }
        thread.start()
    }
}
