import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program started with `posix_spawn`, its standard streams as pipes or /dev/null, reaped with
/// `waitpid`.
///
/// Foundation's `Process` reaps children on a thread of its own and `waitUntilExit` has been seen
/// to hang for good on Linux in containers; this has no thread and no run loop, so a wait ends
/// exactly when the child does. The child gets default signal dispositions and an empty signal
/// mask, whatever the parent blocked or ignored (rivulet blocks SIGINT/SIGTERM and ignores SIGPIPE).
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// A pipe whose other end the parent holds.
        case pipe
        /// /dev/null.
        case null
        /// The parent's own stream.
        case inherit
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The status, as a shell reports it (128 + signal for a signal).
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }

        /// "status N" or "signal N".
        public var description: String {
            switch self {
            case .exited(let status): "status \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// What `communicate` collected.
    public struct Output: Sendable {
        /// Everything the child wrote to its standard output.
        public var standardOutput: [UInt8]
        /// Everything the child wrote to its standard error.
        public var standardError: [UInt8]
        /// How it ended.
        public var termination: Termination
        /// Whether it was killed because it ran past the timeout.
        public var timedOut: Bool
    }

    /// The child's process id.
    public let pid: pid_t
    /// The write end of the child's standard input, when it is a pipe (-1 once closed).
    public private(set) var standardInput: Int32
    /// The read end of the child's standard output, when it is a pipe.
    public private(set) var standardOutput: Int32
    /// The read end of the child's standard error, when it is a pipe.
    public private(set) var standardError: Int32
    private var termination: Termination?

    /// Starts `executable` (looked up in PATH when it has no slash) with `arguments`.
    ///
    /// - Throws: `ChildProcessError` when the program cannot be started.
    /// With `ownGroup`, the child leads a process group of its own, so `sendToGroup` and
    /// `stopGroup` reach the programs it starts too, and the group is killed when rivulet exits.
    public init(
        executable: String, arguments: [String], input: Stream = .null, output: Stream = .pipe,
        error: Stream = .pipe, ownGroup: Bool = false
    ) throws {
        var parentEnds: [Int32] = [-1, -1, -1]
        var childEnds: [Int32] = [-1, -1, -1]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        func closeAll() {
            for descriptor in parentEnds + childEnds where descriptor >= 0 { close(descriptor) }
        }
        for (target, stream) in [input, output, error].enumerated() {
            switch stream {
            case .inherit:
                continue
            case .null:
                posix_spawn_file_actions_addopen(
                    &actions, Int32(target), "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else {
                    closeAll()
                    throw ChildProcessError(message: "cannot create a pipe: \(String(cString: strerror(errno)))")
                }
                // The parent's ends must not leak into other children (or this one).
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                let (parent, child) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds[target] = parent
                childEnds[target] = child
                posix_spawn_file_actions_adddup2(&actions, child, Int32(target))
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        Self.setSignalsAndGroup(&attributes, ownGroup: ownGroup)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawnp(&child, executable, &actions, &attributes, argv, environ)
        for descriptor in childEnds where descriptor >= 0 { close(descriptor) }
        guard result == 0 else {
            for descriptor in parentEnds where descriptor >= 0 { close(descriptor) }
            throw ChildProcessError(message: "cannot start '\(executable)': \(String(cString: strerror(result)))")
        }
        pid = child
        if ownGroup { RunningGroups.shared.add(child) }
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
    }

    /// The child starts with no signal blocked and the stopping signals (and SIGPIPE) at their
    /// default action, whatever the parent did with them; with `ownGroup`, in a group of its own.
    private static func setSignalsAndGroup(_ attributes: inout posix_spawnattr_t, ownGroup: Bool) {
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
    }

    deinit {
        for descriptor in [standardInput, standardOutput, standardError] where descriptor >= 0 { close(descriptor) }
    }

    /// Closes the child's standard input, so it reads end of file.
    public func closeInput() {
        if standardInput >= 0 { close(standardInput) }
        standardInput = -1
    }

    /// Sends `signal` to the child, unless it has been reaped.
    public func send(_ signal: Int32) {
        if termination == nil { kill(pid, signal) }
    }

    /// Sends `signal` to the child's process group (started with `ownGroup`): the programs it
    /// started as well, even after it exited itself.
    public func sendToGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// Stops a child started with `ownGroup`: closes its input and sends its group SIGTERM; a thread
    /// gives it `grace` seconds, then kills the group (a program that ignores SIGTERM, and what it
    /// started) and reaps the child, so the caller never waits. If rivulet exits first, its exit
    /// kills the group.
    public func stopGroup(grace: Double = 2) {
        closeInput()
        sendToGroup(SIGTERM)
        Thread {
            let deadline = Self.monotonicSeconds() + grace
            while self.exited() == nil, Self.monotonicSeconds() < deadline { _ = poll(nil, 0, 20) }
            self.sendToGroup(SIGKILL)
            self.wait()
            RunningGroups.shared.remove(self.pid)
        }.start()
    }

    /// Waits for the child to end and reaps it.
    @discardableResult
    public func wait() -> Termination {
        if let termination { return termination }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let ended = Self.termination(status)
        termination = ended
        return ended
    }

    /// How the child ended, if it has (reaping it), without waiting.
    public func exited() -> Termination? {
        if let termination { return termination }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        let ended = Self.termination(status)
        termination = ended
        return ended
    }

    private static func termination(_ status: Int32) -> Termination {
        // WIFEXITED / WTERMSIG are C macros, not imported into Swift.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// Writes `input` to the child's standard input and closes it, collects its standard output
    /// and error until both close, and reaps it; past `timeout` seconds it is killed (SIGKILL).
    public func communicate(input: [UInt8] = [], timeout: Double? = nil) -> Output {
        var collected: [[UInt8]] = [[], []]
        var pending = input[...]
        var open: [Int32] = [standardOutput, standardError]
        if pending.isEmpty {
            closeInput()
        } else {
            signal(SIGPIPE, SIG_IGN)  // A child that stops reading must not kill the writer.
        }
        if standardInput >= 0 { _ = fcntl(standardInput, F_SETFL, fcntl(standardInput, F_GETFL) | O_NONBLOCK) }
        let deadline = timeout.map { Self.monotonicSeconds() + $0 }
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open.contains(where: { $0 >= 0 }) || standardInput >= 0 {
            var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            descriptors.append(pollfd(fd: standardInput, events: Int16(POLLOUT), revents: 0))
            var wait: Int32 = -1
            if let deadline {
                let remaining = deadline - Self.monotonicSeconds()
                if remaining <= 0 {
                    timedOut = true
                    kill(pid, SIGKILL)
                    break
                }
                wait = Int32(min(remaining * 1000 + 1, 60_000))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), wait)
            if ready < 0 && errno != EINTR { break }
            for index in 0..<2 where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = read(descriptors[index].fd, &buffer, buffer.count)
                if count > 0 {
                    collected[index].append(contentsOf: buffer[0..<count])
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    open[index] = -1
                }
            }
            if standardInput >= 0 && descriptors[2].revents != 0 {
                let written = pending.withUnsafeBytes { write(standardInput, $0.baseAddress, $0.count) }
                if written > 0 {
                    pending = pending.dropFirst(written)
                    if pending.isEmpty {
                        closeInput()
                    } else {
                        signal(SIGPIPE, SIG_IGN)  // A child that stops reading must not kill the writer.
                    }
                } else if written < 0 && errno != EAGAIN && errno != EINTR {
                    closeInput()  // The child stopped reading (EPIPE): what it wrote still counts.
                }
            }
        }
        return Output(
            standardOutput: collected[0], standardError: collected[1], termination: wait(), timedOut: timedOut)
    }

    private static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A program that could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// The message.
    public var description: String { message }
}

/// The process groups of children started with `ownGroup` and not yet stopped, killed when rivulet
/// exits: a program that ignores SIGTERM (or one it started) was left running under init.
private final class RunningGroups: @unchecked Sendable {
    static let shared = RunningGroups()
    private let lock = NSLock()
    private var groups: Set<pid_t> = []
    private var installed = false

    func add(_ group: pid_t) {
        lock.withLock {
            groups.insert(group)
            if !installed {
                installed = true
                atexit { RunningGroups.shared.killAll() }
            }
        }
    }

    func remove(_ group: pid_t) { _ = lock.withLock { groups.remove(group) } }

    private func killAll() {
        for group in lock.withLock({ groups }) { kill(-group, SIGKILL) }
    }
}
