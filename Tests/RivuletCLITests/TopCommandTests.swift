import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet top` against a running pipeline: in a real terminal (tmux), redrawn every second
/// until `q`; on a pipe, one view; a clear error when nothing serves the address.
final class TopCommandTests: BinaryTestCase {
    private var tmux: Tmux?

    override func tearDown() {
        tmux?.kill()
        super.tearDown()
    }

    /// The OUT column of the row whose place is `place`.
    private func out(_ screen: String, _ place: String) -> Int? {
        let row = screen.split(separator: "\n").first { $0.hasPrefix(place + " ") }
        return row.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[5]) }
    }

    func testTopRedrawsInATerminalAndQuitsOnQ() throws {
        guard Tmux.isInstalled else { throw XCTSkip("tmux is not installed") }
        let (run, port) = try startWatchedCounter()
        defer {
            if run.exited() == nil {
                run.send(SIGKILL)
                _ = run.wait()
            }
        }
        let terminal = Tmux("top")
        tmux = terminal
        try terminal.start()
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        try terminal.type("\(binary) top 127.0.0.1:\(port); echo top-exit=$?", enter: true)
        let first = try terminal.waitFor("q quits")
        assertContains(first, "rivulet top — watched at 127.0.0.1:\(port) — ready", "PLACE", "ops.0   filter")
        let before = try XCTUnwrap(out(first, "source"), first)
        Thread.sleep(forTimeInterval: 1.5)
        let later = try terminal.screen()
        let after = try XCTUnwrap(out(later, "source"), later)
        XCTAssertGreaterThan(after, before, "redrawn with new totals:\n\(later)")
        XCTAssertNotNil(later.range(of: #"source\s+interval\s+-\s+\d+\.\d"#, options: .regularExpression), later)
        try terminal.type("q")
        let back = try terminal.waitFor("top-exit=0")
        XCTAssertFalse(back.contains("PLACE"), "the terminal's own screen is back:\n\(back)")

        // Watching a run that ends: top says so and gives the screen back.
        try terminal.type("clear; \(binary) top 127.0.0.1:\(port); echo top-again=$?", enter: true)
        try terminal.waitFor("q quits")
        run.send(SIGKILL)
        _ = run.wait()
        let ended = try terminal.waitFor("top-again=0")
        assertContains(ended, "the run at 127.0.0.1:\(port) has ended")
        XCTAssertFalse(ended.contains("PLACE"), ended)
    }

    func testOnAPipeOneViewAndAClearErrorWhenNothingServes() throws {
        let (run, port) = try startWatchedCounter()
        defer {
            run.send(SIGKILL)
            _ = run.wait()
        }
        let view = try runRivulet(["top", "127.0.0.1:\(port)"])
        XCTAssertEqual(view.status, 0, view.stderr)
        let lines = view.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 6, view.stdout)
        XCTAssertTrue(lines[1].hasPrefix("PLACE  "), view.stdout)
        XCTAssertEqual(
            lines.dropFirst(2).map { String($0.prefix(while: { $0 != " " })) }, ["source", "ops.0", "ops.1", "sink"])
        XCTAssertFalse(view.stdout.contains("\u{1B}["), "no terminal codes on a pipe")
        let some = try runRivulet(["top", "127.0.0.1:\(port)", "ops.*", "sink"])
        XCTAssertEqual(some.status, 0, some.stderr)
        XCTAssertEqual(
            some.stdout.split(separator: "\n").dropFirst(2).map { String($0.prefix(while: { $0 != " " })) },
            ["ops.0", "ops.1", "sink"], "the places asked for: \(some.stdout)")

        let free = freeLoopbackPort()
        let nothing = try runRivulet(["top", "127.0.0.1:\(free)"])
        XCTAssertEqual(nothing.status, 1)
        assertContains(
            nothing.stderr,
            "error: cannot reach 127.0.0.1:\(free): Connection refused (is a run serving --metrics there?)")
        XCTAssertNotEqual(try runRivulet(["top", "nowhere"]).status, 0)
    }

    func testAViewTallerThanTheTerminalIsCutWithTheTitleKept() throws {
        guard Tmux.isInstalled else { throw XCTSkip("tmux is not installed") }
        // 16 partitions: a table of 16 rows under the components, more than 20 rows in all.
        let (run, port) = try startWatched(
            """
            source: { interval: 10ms }
            ops:
              - partitionBy: { key: ., partitions: 16, ops: [ { map: . } ] }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """)
        defer {
            if run.exited() == nil {
                run.send(SIGKILL)
                _ = run.wait()
            }
        }
        let terminal = Tmux("top-cut")
        tmux = terminal
        try terminal.start(width: 100, height: 20)
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        try terminal.type("\(binary) top 127.0.0.1:\(port); echo top-exit=$?", enter: true)
        let screen = try terminal.waitFor("q quits")
        assertContains(screen, "rivulet top — watched at 127.0.0.1:\(port)", "ops.0 partitionBy by partition")
        XCTAssertNotNil(screen.range(of: #"… [0-9]+ more lines"#, options: .regularExpression), screen)
        try terminal.type("q")
        try terminal.waitFor("top-exit=0")
    }
}
