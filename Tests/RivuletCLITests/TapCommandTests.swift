import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet tap` against a running pipeline: the elements passing a component as JSON Lines, up
/// to a limit; the first sink's by default; a place that does not exist named with the others.
final class TapCommandTests: BinaryTestCase {
    func testTapPrintsTheElementsPassingAComponent() throws {
        let (run, port) = try startWatchedCounter(every: "5ms")
        defer {
            run.send(SIGKILL)
            _ = run.wait()
        }
        let address = "127.0.0.1:\(port)"

        let filtered = try runRivulet(["tap", address, "--component", "ops.0", "--limit", "4"])
        XCTAssertEqual(filtered.status, 0, filtered.stderr)
        let numbers = filtered.stdout.split(separator: "\n").compactMap { Int($0) }
        XCTAssertEqual(numbers.count, 4, filtered.stdout)
        XCTAssertTrue(numbers.allSatisfy { $0 % 2 == 0 }, "what the filter let through: \(numbers)")
        XCTAssertEqual(numbers, numbers.sorted(), "in order")

        let written = try runRivulet(["tap", address, "--limit", "2"])
        XCTAssertEqual(written.status, 0, written.stderr)
        let lines = written.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, written.stdout)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("{\"n\":") }, "what the sink receives: \(lines)")

        let noLimit = try runRivulet(["tap", address, "--limit", "0"])
        XCTAssertEqual(noLimit.status, 2)
        assertContains(noLimit.stderr, "--limit expects a positive number, got 0")
        let badAddress = try runRivulet(["tap", "9464"])
        XCTAssertEqual(badAddress.status, 2)
        assertContains(badAddress.stderr, "tap expects HOST:PORT")

        // A stream's name is what it emits (its last stage); a glob names one place, or says which.
        let stream = try runRivulet(["tap", address, "--component", "main", "--limit", "2"])
        XCTAssertEqual(stream.status, 0, stream.stderr)
        XCTAssertTrue(stream.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("{\"n\":") }, stream.stdout)
        let glob = try runRivulet(["tap", address, "--component", "*filter*", "--limit", "2"])
        XCTAssertEqual(glob.status, 0, glob.stderr)
        XCTAssertTrue(
            glob.stdout.split(separator: "\n").allSatisfy { Int($0).map { $0 % 2 == 0 } == true }, glob.stdout)
        let several = try runRivulet(["tap", address, "--component", "ops.*", "--limit", "1"])
        XCTAssertEqual(several.status, 1)
        assertContains(several.stderr, "'ops.*' matches 2 places (ops.0, ops.1); tap takes one")

        let nowhere = try runRivulet(["tap", address, "--component", "ops.7", "--limit", "1"])
        XCTAssertEqual(nowhere.status, 1)
        XCTAssertEqual(nowhere.stdout, "")
        assertContains(nowhere.stderr, "no component at 'ops.7'; places: source, ops.0, ops.1, sink")
    }

    func testTapInATerminalPrintsUntilControlC() throws {
        guard Tmux.isInstalled else { throw XCTSkip("tmux is not installed") }
        let (run, port) = try startWatchedCounter(every: "20ms")
        let terminal = Tmux("tap")
        defer {
            terminal.kill()
            run.send(SIGKILL)
            _ = run.wait()
        }
        try terminal.start()
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        try terminal.type("clear; \(binary) tap 127.0.0.1:\(port) --component ops.1", enter: true)
        try terminal.waitFor("{\"n\":")
        Thread.sleep(forTimeInterval: 0.5)
        let screen = try terminal.screen()
        let values = screen.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("{\"n\":") else { return nil }
            return Int(line.dropFirst(5).dropLast())
        }
        XCTAssertGreaterThan(values.count, 3, "a line an element, as they pass:\n\(screen)")
        XCTAssertTrue(values.allSatisfy { $0 % 2 == 0 }, screen)
        XCTAssertEqual(values, values.sorted(), screen)
        // Killed by SIGINT, the shell skips the rest of a command line: ask for the status after.
        try terminal.press("C-c")
        try terminal.type("echo tap-\"\"exit=$?", enter: true)
        try terminal.waitFor("tap-exit=130")
        XCTAssertNil(run.exited(), "the run goes on when its tap ends")
    }
}
