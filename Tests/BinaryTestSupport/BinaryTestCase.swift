import Components
import Foundation
import HTTPTestServer
import RivuletTestSupport
import Synchronization
import XCTest

/// A test case that runs the binary: a scratch directory and, once `serve` is called, a server on
/// 127.0.0.1; both are gone after each test.
open class BinaryTestCase: XCTestCase {
    /// The test's scratch directory.
    public var directory: URL!
    private var server: TestHTTPServer?

    open override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    open override func tearDown() {
        server?.shutdown()
        try? FileManager.default.removeItem(at: directory)
        super.tearDown()
    }

    /// Starts a server that answers with `script`.
    public func serve(_ script: @escaping TestHTTPServer.Script) throws -> TestHTTPServer {
        let started = try TestHTTPServer(script: script)
        server = started
        return started
    }

    /// Runs `rivulet run` on a pipeline file with `pipeline` as its text.
    public func run(_ pipeline: String, _ arguments: [String] = [], environment: [String: String] = [:]) throws
        -> ProcessResult
    {
        let file = directory.appendingPathComponent("p-\(UUID().uuidString).yaml")
        try pipeline.write(to: file, atomically: true, encoding: .utf8)
        return try runRivulet(["run", file.path] + arguments, environment: environment)
    }

    /// Runs `rivulet` with `arguments` again and again while `going()` holds, killing each run
    /// with SIGKILL after a random 50 to 400 ms; then once to its end, unless a run finished by
    /// itself (a run after a finished one starts afresh and writes everything again, which would
    /// hide a loss). Returns how many runs were killed.
    public func runKilledAtRandom(
        _ arguments: [String], while going: () -> Bool, file: StaticString = #filePath, line: UInt = #line
    ) throws -> Int {
        var killed = 0
        while going() {
            let process = try startRivulet(arguments, output: .null, error: .null)
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.4))
            process.send(SIGKILL)
            let end = process.wait()
            guard end == .signalled(SIGKILL) else {
                XCTAssertEqual(end, .exited(0), file: file, line: line)
                return killed
            }
            killed += 1
        }
        let last = try runRivulet(arguments, timeout: 300)
        XCTAssertEqual(last.status, 0, last.stderr, file: file, line: line)
        return killed
    }

    /// `runKilledAtRandom` for as long as `write` (on a thread of its own: appending to what the
    /// runs read, say) goes on.
    public func runKilledAtRandom(
        _ arguments: [String], whileWriting write: @escaping @Sendable () -> Void, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> Int {
        let writing = Mutex(true)
        let writer = Thread {
            write()
            writing.withLock { $0 = false }
        }
        writer.start()
        return try runKilledAtRandom(arguments, while: { writing.withLock { $0 } }, file: file, line: line)
    }
}

extension BinaryTestCase {
    /// Starts `pipeline` with --metrics on a free port; returns once /health answers.
    public func startWatched(_ pipeline: String, name: String = "watched", arguments: [String] = []) throws -> (
        ChildProcess, Int
    ) {
        let file = directory.appendingPathComponent("\(name).yaml").path
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        let port = freeLoopbackPort()
        let process = try startRivulet(
            ["run", file, "--metrics", "127.0.0.1:\(port)"] + arguments, output: .null, error: .pipe)
        let deadline = Date(timeIntervalSinceNow: 10)
        while LoopbackHTTP.get(port, "/health") == nil && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        return (process, port)
    }

    /// `interval: 10ms` → `filter: . % 2 == 0` → `map: {n: .}` → a file, watched; its port.
    public func startWatchedCounter(every period: String = "10ms") throws -> (ChildProcess, Int) {
        try startWatched(
            """
            source: { interval: \(period) }
            ops:
              - filter: . % 2 == 0
              - map: { n: . }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """)
    }
}
