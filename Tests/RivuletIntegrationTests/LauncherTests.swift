import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// The `rivulet` launcher (Sources/rivulet/main.c): a stop signal in the first milliseconds of a
/// run gets an orderly stop, the engine beside it is found through links and gets a larger
/// allocator cache (what it starts gets the user's environment), and a missing engine is a clear
/// error.
final class LauncherTests: BinaryTestCase {
    private var launcher: String { productsDirectory().appendingPathComponent("rivulet").path }

    /// How a signalled run ended, and whether the process had blocked the stop signals when the
    /// signal was sent (read from /proc just before).
    private struct SignalledRun {
        let termination: ChildProcess.Termination
        let hadBlockedTheSignal: Bool
        /// From the signal to the process's end.
        let secondsToStop: Double
    }

    /// Starts `rivulet run` and sends `signal` `milliseconds` after the process started (the spawn
    /// returned its pid: it has been replaced by the launcher's image); returns how the run ended.
    private func signalled(_ signal: Int32, after milliseconds: Int) throws -> SignalledRun {
        let process = try ChildProcess(
            executable: launcher, arguments: ["run", directory.appendingPathComponent("p.yaml").path],
            input: .null, output: .null, error: .null)
        // A sleep, not a busy wait: a parent spinning holds the core the new process was woken on,
        // and the process does not run for a scheduler tick (measured: a static C program that
        // blocks the signals first died of a SIGTERM at 2 ms in 66 of 100 runs after a busy wait,
        // in 0 of 200 after a sleep, which overshot by at most 0.18 ms). A user's shell sleeps too.
        var wait = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
        var left = timespec()
        while nanosleep(&wait, &left) != 0 && errno == EINTR { wait = left }
        let blocked = Self.blockedSignals(of: process.pid)
        process.send(signal)
        let sent = DispatchTime.now().uptimeNanoseconds
        let termination = process.wait()
        return SignalledRun(
            termination: termination, hadBlockedTheSignal: blocked & UInt64(1) << UInt64(signal - 1) != 0,
            secondsToStop: Double(DispatchTime.now().uptimeNanoseconds - sent) / 1e9)
    }

    /// The signals the process's main thread blocks (`SigBlk` in /proc/PID/status), 0 if unreadable.
    private static func blockedSignals(of pid: pid_t) -> UInt64 {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }) else { return 0 }
        return UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) ?? 0
    }

    /// Whether the run stopped in order (128 + the signal) when signalled at `milliseconds`. A try
    /// that ends by the signal although the process had blocked it is a failure at once. A try
    /// that ends by the signal before the process blocked it is tried again, up to five times: a
    /// new process is sometimes not scheduled at all for over 2 ms on a busy machine (the
    /// launcher's first instruction had not run), and no program can block a signal before it
    /// runs. Without the launcher every try up to 12 ms fails (the engine blocks them after
    /// loading its libraries).
    private func stopsInOrder(_ signal: Int32, after milliseconds: Int, tries: inout [String]) throws -> Bool {
        for attempt in 1...5 {
            let run = try signalled(signal, after: milliseconds)
            // A run stopped before its pipeline started once waited for the signal thread to give
            // up (35 s): the stop had found nothing to stop.
            if run.termination == .exited(128 + signal) && run.secondsToStop < 10 { return true }
            let state = run.hadBlockedTheSignal ? "blocked" : "not yet blocked"
            tries.append(
                "signal \(signal) at \(milliseconds) ms, try \(attempt) (\(state)): \(run.termination) after "
                    + String(format: "%.1f s", run.secondsToStop))
            if run.hadBlockedTheSignal { return false }
        }
        return false
    }

    func testASignalTwoToTwentyOneMillisecondsAfterStartStopsTheRunInOrder() throws {
        // Without the launcher, every SIGTERM up to 12 ms ended the run by the default action: the
        // engine's own signal block runs only after its 32 libraries are loaded (about 15 ms).
        try "source: { interval: 50ms }\nsink: stdout\n"
            .write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        var failed: [Int] = []
        var tries: [String] = []
        for milliseconds in 2...21 where try !stopsInOrder(SIGTERM, after: milliseconds, tries: &tries) {
            failed.append(milliseconds)
        }
        for milliseconds in [2, 5, 10] where try !stopsInOrder(SIGINT, after: milliseconds, tries: &tries) {
            failed.append(-milliseconds)
        }
        XCTAssertEqual(failed, [], "every signal gets an orderly stop (exit 143 or 130): \(tries)")
        if !tries.isEmpty { print("LauncherTests: tries that ended by the signal: \(tries)") }
    }

    func testTheEngineIsFoundThroughALinkAndItsProcessIsNamedRivulet() throws {
        let link = directory.appendingPathComponent("bin/rivulet")
        try FileManager.default.createDirectory(
            at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: launcher)
        try "source: { interval: 20ms }\nsink: stdout\n"
            .write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            executable: link.path, arguments: ["run", directory.appendingPathComponent("p.yaml").path],
            input: .null, output: .pipe, error: .pipe)
        // `ps`, `top` and `pkill rivulet` see the name people typed, not the engine's file name.
        var name = ""
        for _ in 0..<100 where name != "rivulet" {
            usleep(20_000)
            name = ((try? String(contentsOfFile: "/proc/\(process.pid)/comm", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(name, "rivulet")
        let engine = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.pid)/exe")
        XCTAssertTrue(engine.hasSuffix("/rivulet-engine"), engine)
        // Long enough for two ticks after the engine started, even beside a busy test shard
        // (300 ms once gave none).
        usleep(1_500_000)
        process.send(SIGTERM)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination, .exited(143), String(decoding: output.standardError, as: UTF8.self))
        XCTAssertTrue(String(decoding: output.standardOutput, as: UTF8.self).hasPrefix("0\n1\n"))
    }

    /// What `sh` started by a run's `exec` source saw: its own GLIBC_TUNABLES and launcher note,
    /// and the engine's (its parent's) as the engine was started. (glibc cuts the engine's
    /// GLIBC_TUNABLES at its first `:` in /proc as it reads it: only a lone setting shows whole.)
    private func tunablesSeen(withUsers users: String?) throws -> String {
        try """
        started() { tr '\\0' '\\n' < /proc/$PPID/environ | sed -n "s/^$1=//p"; }
        printf '%s|%s|%s|%s\\n' "${GLIBC_TUNABLES-unset}" "${RIVULET_LAUNCHER_TUNABLES-unset}" \\
          "$(started GLIBC_TUNABLES)" "$(started RIVULET_LAUNCHER_TUNABLES)"
        """.write(to: directory.appendingPathComponent("tunables.sh"), atomically: true, encoding: .utf8)
        let result = try run(
            "source: { exec: { command: [sh, ./tunables.sh], format: text } }\nsink: stdout\n",
            environment: users.map { ["GLIBC_TUNABLES": $0] } ?? [:])
        XCTAssertEqual(result.status, 0, result.stderr)
        // One line of text, written as a JSON string.
        return String(result.stdout.dropFirst().dropLast(2)) + "\n"
    }

    func testTheEngineGetsALargerAllocatorCacheAndWhatItStartsGetsTheUsersEnvironment() throws {
        try XCTSkipIf(ProcessInfo.processInfo.environment["GLIBC_TUNABLES"] != nil, "the suite runs with tunables")
        // Seen by the child | the launcher's note seen by the child | the engine's | its note.
        XCTAssertEqual(try tunablesSeen(withUsers: nil), "unset|unset|glibc.malloc.tcache_count=65535|-\n")
        XCTAssertEqual(
            try tunablesSeen(withUsers: "glibc.malloc.perturb=0"),
            "glibc.malloc.perturb=0|unset|glibc.malloc.perturb=0|GLIBC_TUNABLES=glibc.malloc.perturb=0\n")
        // A count the user chose stands.
        XCTAssertEqual(
            try tunablesSeen(withUsers: "glibc.malloc.tcache_count=100"),
            "glibc.malloc.tcache_count=100|unset|glibc.malloc.tcache_count=100|\n")
    }

    func testALauncherWithoutItsEngineSaysWhatIsMissing() throws {
        let alone = directory.appendingPathComponent("rivulet").path
        try FileManager.default.copyItem(atPath: launcher, toPath: alone)
        let output = try ChildProcess(executable: alone, arguments: ["--version"]).communicate(timeout: 30)
        XCTAssertEqual(output.termination, .exited(127))
        let error = String(decoding: output.standardError, as: UTF8.self)
        assertContains(
            error, "rivulet: error: cannot start \(directory.path)/rivulet-engine: No such file or directory")
        assertContains(error, "installed beside rivulet")
    }
}
