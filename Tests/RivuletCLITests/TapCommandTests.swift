import Components
import Foundation
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
        XCTAssertTrue(noLimit.stderr.contains("--limit expects a positive number, got 0"), noLimit.stderr)
        let badAddress = try runRivulet(["tap", "9464"])
        XCTAssertEqual(badAddress.status, 2)
        XCTAssertTrue(badAddress.stderr.contains("tap expects HOST:PORT"), badAddress.stderr)

        let nowhere = try runRivulet(["tap", address, "--component", "ops.7", "--limit", "1"])
        XCTAssertEqual(nowhere.status, 1)
        XCTAssertEqual(nowhere.stdout, "")
        XCTAssertTrue(
            nowhere.stderr.contains("no component at 'ops.7'; places: source, ops.0, ops.1, sink"), nowhere.stderr)
    }
}
