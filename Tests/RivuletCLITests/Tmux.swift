import BinaryTestSupport
import Components
import Foundation
import Synchronization
import XCTest

/// A tmux session for tests that need a real terminal: started with `start`, driven with `keys`,
/// read with `screen` and `waitFor`, killed by `kill`. Each has a server of its own (its own
/// socket): a test that started right after another's session was killed reached the old server
/// as it exited, and its session never showed (seen under a full run's load).
final class Tmux {
    let session: String
    /// The server's socket, removed by `kill` (tmux leaves it behind).
    private let socket: String
    private static let made = Atomic<Int>(0)

    init(_ name: String) {
        session = "rivulet-\(name)-\(getpid())-\(Self.made.wrappingAdd(1, ordering: .relaxed).oldValue)"
        socket = FileManager.default.temporaryDirectory.appendingPathComponent("\(session).tmux").path
    }

    /// Whether tmux is installed (tests are skipped without it).
    static var isInstalled: Bool { FileManager.default.fileExists(atPath: "/usr/bin/tmux") }

    /// Runs tmux; only capture-pane's output is read (the tmux server, started by new-session,
    /// would hold a pipe open forever).
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let capture = arguments.first == "capture-pane"
        let process = try ChildProcess(
            executable: "tmux", arguments: ["-S", socket] + arguments, output: capture ? .pipe : .null,
            error: .null)
        let output = process.communicate(timeout: 60)
        return String(decoding: output.standardOutput, as: UTF8.self)
    }

    /// A new session running a plain bash, `width` × `height`.
    func start(width: Int = 100, height: Int = 20) throws {
        try run([
            "new-session", "-d", "-s", session, "-x", "\(width)", "-y", "\(height)", "bash", "--norc", "--noprofile",
        ])
    }

    /// Types `text` literally (`enter`: then presses Enter).
    func type(_ text: String, enter: Bool = false) throws {
        try run(["send-keys", "-t", session, "-l", text])
        if enter { try run(["send-keys", "-t", session, "Enter"]) }
    }

    /// Presses keys by tmux's names (`Enter`, `C-c`, `BSpace`).
    func press(_ keys: String...) throws { try run(["send-keys", "-t", session] + keys) }

    func screen() throws -> String { try run(["capture-pane", "-p", "-t", session]) }

    /// Waits until the screen shows `text` (up to 10 s); the screen then.
    @discardableResult
    func waitFor(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        var last = ""
        for _ in 0..<100 {
            last = try screen()
            if last.contains(text) { return last }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTFail("the screen never showed '\(text)':\n\(last)", file: file, line: line)
        return last
    }

    func kill() {
        _ = try? run(["kill-session", "-t", session])
        unlink(socket)
    }
}
