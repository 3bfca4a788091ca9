import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// The end of every run: a summary line on standard error (`--quiet` drops it, `--summary` adds a
/// table per component); and while a run goes on in a terminal, the progress line.
final class RunReportTests: BinaryTestCase {
    private var tmux: Tmux?

    override func tearDown() {
        tmux?.kill()
        super.tearDown()
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try "[1, 2, 3, 4, 5, 6]".write(
            to: directory.appendingPathComponent("six.json"), atomically: true, encoding: .utf8)
    }

    private let filtering = """
        source: { fixture: six.json }
        ops:
          - filter: . % 2 == 0
          - map: . * 10
        sink: stdout
        """

    /// A tmux terminal, the pipeline written to a file, the binary, and a file for standard output.
    private func startTerminal(_ name: String, pipeline: String) throws -> (
        terminal: Tmux, file: URL, binary: String, output: String
    ) {
        let file = directory.appendingPathComponent("\(name).yaml")
        try pipeline.write(to: file, atomically: true, encoding: .utf8)
        let terminal = Tmux(name)
        tmux = terminal
        try terminal.start()
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        return (terminal, file, binary, directory.appendingPathComponent("\(name).out").path)
    }

    func testEveryRunEndsWithASummaryLine() throws {
        let result = try run(filtering)
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout, "20\n40\n60\n")
        XCTAssertNotNil(
            result.stderr.range(
                of: #"^run completed: 6 elements read, 3 written, 0 errors in \d+ms\n$"#, options: .regularExpression),
            result.stderr)

        let quiet = try run(filtering, ["--quiet"])
        XCTAssertEqual(quiet.stdout, "20\n40\n60\n")
        XCTAssertEqual(quiet.stderr, "")

        let stopped = try run("source: { interval: 10ms }\nsink: stdout\n", ["--clock", "virtual", "--until", "55ms"])
        XCTAssertTrue(stopped.stderr.hasPrefix("run stopped: 5 elements read, 5 written, 0 errors in "), stopped.stderr)

        // A JSON Lines file whose first line fails (its map runs on every core): that line was read.
        let lines = directory.appendingPathComponent("two.jsonl")
        try "{\"a\":1}\n{\"a\":2}\n".write(to: lines, atomically: true, encoding: .utf8)
        let failed = try run("source: { fixture: \(lines.path) }\nops: [{ map: .a / 0 }]\nsink: stdout\n")
        XCTAssertEqual(failed.status, 1)
        assertContains(failed.stderr, "run failed: 1 element read, 0 written, 1 error in ")
    }

    func testLateElementsAreCountedAsLateNotAsErrors() throws {
        // After 30 s the watermark is 20 s: 12 s is late. The line once said "1 error", while the
        // table (--summary) said 0 for eventTime.
        let lines = directory.appendingPathComponent("times.jsonl")
        try "{\"t\":10}\n{\"t\":30}\n{\"t\":12}\n{\"t\":25}\n".write(to: lines, atomically: true, encoding: .utf8)
        let result = try run(
            """
            source: { file: { path: \(lines.path), format: jsonl } }
            eventTime: { time: .t * 1000, maxDelay: 10s }
            ops: [{ map: .t }]
            sink: stdout
            """, ["--summary"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "10\n25\n30\n")
        assertContains(
            result.stderr, "eventTime skipped 1 element late",
            "run completed: 4 elements read, 3 written, 0 errors, 1 late in ")
        XCTAssertNotNil(result.stderr.range(of: #"eventTime +4 +3 +0\n"#, options: .regularExpression), result.stderr)
        let json = try run(
            """
            source: { file: { path: \(lines.path), format: jsonl } }
            eventTime: { time: .t * 1000, maxDelay: 10s }
            sink: stdout
            """, ["--log-format", "json"])
        assertContains(json.stderr, #""errors":0"#, #""late":1"#)
    }

    func testSummaryAddsATablePerComponent() throws {
        let result = try run(filtering, ["--summary"])
        XCTAssertEqual(result.status, 0)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            Array(lines.prefix(5)),
            [
                "PLACE   COMPONENT  IN  OUT  ERRORS",
                "source  fixture     -    6       0",
                "ops.0   filter      6    3       0",
                "ops.1   map         3    3       0",
                "sink    stdout      3    -       0",
            ], result.stderr)
        XCTAssertTrue(lines.last?.hasPrefix("run completed: 6 elements read, 3 written") == true, result.stderr)
    }

    func testAnInterruptedRunSaysSoInItsSummary() throws {
        let file = directory.appendingPathComponent("endless.yaml")
        try "source: { interval: 20ms }\nsink: stdout\n".write(to: file, atomically: true, encoding: .utf8)
        let process = try startRivulet(["run", file.path])
        Thread.sleep(forTimeInterval: 0.5)
        process.send(SIGINT)
        let output = process.communicate(timeout: 30)
        XCTAssertEqual(output.termination.status, 130)
        let stderr = String(decoding: output.standardError, as: UTF8.self)
        let written = String(decoding: output.standardOutput, as: UTF8.self).split(separator: "\n").count
        XCTAssertTrue(stderr.hasPrefix("run interrupted: \(written) elements read, \(written) written"), stderr)
    }

    func testAProgressLineOnATerminalBelowStandardOutputAndNoneWhenPiped() throws {
        guard Tmux.isInstalled else { throw XCTSkip("tmux is not installed") }
        try "[\(Array(0..<40).map(String.init).joined(separator: ","))]".write(
            to: directory.appendingPathComponent("numbers.json"), atomically: true, encoding: .utf8)
        let (terminal, file, binary, output) = try startTerminal(
            "progress", pipeline: "source: { fixture: { path: numbers.json, every: 100ms } }\nsink: stdout\n")
        try terminal.type("\(binary) run \(file.path) > \(output); echo run-exit=$?", enter: true)
        // A bar with the share done, the counts, the rate and the time left, redrawn in place.
        let early = try terminal.waitFor("% ")
        let bar = try XCTUnwrap(
            early.split(separator: "\n").first { $0.hasPrefix("[") }.map(String.init), early)
        XCTAssertNotNil(
            bar.range(
                of: #"^\[#*-+\] +\d+%  \d+ read, \d+ written, \d+/s, \S+ left$"#, options: .regularExpression), bar)
        Thread.sleep(forTimeInterval: 1)
        let later = try terminal.screen()
        let share = { (screen: String) in
            screen.range(of: #"\d+%"#, options: .regularExpression).map { Int(screen[$0].dropLast())! } ?? -1
        }
        XCTAssertGreaterThan(share(later), share(early), "redrawn:\n\(later)")
        XCTAssertEqual(
            later.split(separator: "\n").filter { $0.contains("%") }.count, 1, "one line, redrawn in place:\n\(later)")
        let done = try terminal.waitFor("run-exit=0")
        XCTAssertFalse(done.contains("%"), "the line is cleared at the end:\n\(done)")
        assertContains(done, "run completed: 40 elements read, 40 written, 0 errors")

        // Standard output on the same terminal: the elements' lines go above the progress line,
        // each whole, and the line stays at the foot.
        try terminal.type("clear; \(binary) run \(file.path); echo again-exit=$?", enter: true)
        Thread.sleep(forTimeInterval: 1.5)
        let shared = try terminal.screen().split(separator: "\n").map(String.init)
        let elements = shared.filter { Int($0) != nil }
        XCTAssertGreaterThan(elements.count, 5, shared.joined(separator: "\n"))
        XCTAssertEqual(elements, (0..<elements.count).map(String.init), shared.joined(separator: "\n"))
        let progress = shared.filter { $0.contains("%") }
        XCTAssertEqual(progress.count, 1, shared.joined(separator: "\n"))
        XCTAssertTrue(progress.first?.hasPrefix("[") == true, "nothing written into the line:\n\(shared)")
        XCTAssertEqual(shared.last { !$0.isEmpty }, progress.first, "the line is at the foot")
        let end = try terminal.waitFor("again-exit=0")
        XCTAssertFalse(end.contains("%"), "the line is cleared at the end:\n\(end)")
        assertContains(end, "39\nrun completed: 40 elements read, 40 written, 0 errors")

        // Piped: no line, no carriage return, just the summary.
        let piped = try runRivulet(["run", file.path, "--set", "source.fixture.every=10ms"])
        XCTAssertEqual(piped.status, 0)
        XCTAssertFalse(piped.stderr.contains("\r"), piped.stderr)
        XCTAssertTrue(piped.stderr.hasPrefix("run completed: 40 elements read"), piped.stderr)
    }

    func testQuietHasNoProgressLineOnATerminal() throws {
        guard Tmux.isInstalled else { throw XCTSkip("tmux is not installed") }
        let (terminal, file, binary, output) = try startTerminal(
            "quiet", pipeline: "source: { interval: 50ms }\nops:\n  - take: 20\nsink: stdout\n")
        try terminal.type("\(binary) run \(file.path) --quiet > \(output); echo quiet-exit=$?", enter: true)
        Thread.sleep(forTimeInterval: 0.6)
        let during = try terminal.screen()
        XCTAssertFalse(during.contains("read,"), during)
        let done = try terminal.waitFor("quiet-exit=0")
        XCTAssertFalse(done.contains("run completed"), done)

        // Unbounded input without --quiet: the rate and the totals, no bar.
        try terminal.type("clear; \(binary) run \(file.path) > \(output); echo loud-exit=$?", enter: true)
        let rate = try terminal.waitFor("written, ")
        let line = try XCTUnwrap(rate.split(separator: "\n").first { $0.contains("written, ") }, rate)
        XCTAssertNotNil(
            line.range(of: #"^\d+ read, \d+ written, \d+/s, \S+$"#, options: .regularExpression), String(line))
        try terminal.waitFor("loud-exit=0")
    }
}
