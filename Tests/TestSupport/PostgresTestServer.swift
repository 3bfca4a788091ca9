import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL cluster of the test's own: `initdb` into a scratch folder, the server on
/// 127.0.0.1 at a free port with `wal_level=logical`, trusted local logins as `postgres`, stopped
/// and deleted by `stop()` (or by the cluster's `deinit`). Run as the `postgres` user when the tests
/// run as root, since `initdb` refuses root. Its port is read from any thread (a writer running
/// `psql` beside the test); it is started and stopped from the test's.
public final class PostgresTestServer: @unchecked Sendable {
    /// The cluster's folder (data, socket, log).
    public let directory: URL
    /// The port the server listens on.
    public private(set) var port: Int = 0
    private var running = false

    /// The URL a pipeline names to reach the server.
    public var url: String { "postgresql://postgres@127.0.0.1:\(port)/postgres" }

    /// Creates the cluster and starts it (`settings` are extra `-c name=value` server settings).
    public init(settings: [String] = []) throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("rivulet-pg-\(getpid())-\(UUID().uuidString.prefix(8))")
        self.settings = settings
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres", directory.path]) }
        try runAsOwner(
            Self.binary("initdb"),
            ["-D", dataPath, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--no-instructions"])
        try start()
    }

    private let settings: [String]
    private var dataPath: String { directory.appendingPathComponent("data").path }

    /// Starts the server (again, after `stop(deleting: false)` or `kill()`), on the same port
    /// once it has one. A port taken between the pick and the start is tried again with another.
    public func start() throws {
        var lastError: (any Error)?
        for _ in 0..<3 {
            if port == 0 || lastError != nil { port = freeLoopbackPort() }
            let options =
                [
                    "-c listen_addresses=127.0.0.1", "-p \(port)", "-k \(directory.path)", "-c wal_level=logical",
                    "-c max_wal_senders=20", "-c max_replication_slots=20", "-c fsync=off",
                ] + settings.map { "-c \($0)" }
            do {
                try runAsOwner(
                    Self.binary("pg_ctl"),
                    [
                        "-D", dataPath, "-l", directory.appendingPathComponent("log").path, "-w", "-t", "60", "-o",
                        options.joined(separator: " "), "start",
                    ])
                running = true
                return
            } catch {
                lastError = error
            }
        }
        throw lastError!
    }

    /// Stops the server: `fast` ends sessions and shuts down cleanly; `immediate` is a crash
    /// (the server recovers from its log at the next start).
    public func stop(mode: String = "fast", deleting: Bool = true) {
        if running {
            try? runAsOwner(Self.binary("pg_ctl"), ["-D", dataPath, "-m", mode, "-w", "stop"])
            running = false
        }
        if deleting { try? FileManager.default.removeItem(at: directory) }
    }

    deinit {
        stop()
    }

    /// Runs `sql` with `psql` and returns its output, unaligned, tuples only (`a|b` per row).
    @discardableResult
    public func psql(_ sql: String) throws -> String {
        try Self.run(
            "/usr/bin/psql",
            [
                "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres",
                "-d", "postgres", "-c", sql,
            ])
    }

    /// The folder of PostgreSQL's server programs (Debian keeps them out of PATH).
    static func binary(_ name: String) -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted()
        guard let newest = versions.last else { return name }
        return "\(root)/\(newest)/bin/\(name)"
    }

    private func runAsOwner(_ program: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
        } else {
            try Self.run(program, arguments)
        }
    }

    /// Runs `program` and waits for it; its output and errors, or an error with them when it failed.
    /// (posix_spawn and waitpid: Foundation's `Process` lost the exit of a child here.)
    @discardableResult
    public static func run(_ program: String, _ arguments: [String]) throws -> String {
        let outputPath = NSTemporaryDirectory() + "rivulet-pg-output-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else { throw NSError(domain: "cannot start \(program): errno \(spawned)", code: 1) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        guard exited == 0 else {
            throw NSError(
                domain: "\(program) \(arguments.joined(separator: " ")) failed (\(exited)): \(text)", code: Int(exited))
        }
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}
