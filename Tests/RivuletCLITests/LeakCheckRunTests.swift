import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// Runs of the binary that must free every sink and disposable of the runtime by their end
/// (`RIVULET_LEAK_CHECK=1`: a debug build then exits with 70 when one is still alive). Each
/// pipeline here leaked once: a threaded partition's chain held by its lane, a reader's lines
/// left waiting on a run loop nobody ran, a credits semaphore freed with credits taken (a trap).
final class LeakCheckRunTests: BinaryTestCase {
    private func runChecked(_ pipeline: String, stdin: String? = nil) throws -> ProcessResult {
        let file = directory.appendingPathComponent("p-\(UUID().uuidString).yaml")
        try pipeline.write(to: file, atomically: true, encoding: .utf8)
        return try runRivulet(["run", "-q", file.path], stdin: stdin, environment: ["RIVULET_LEAK_CHECK": "1"])
    }

    private func records() throws -> String {
        let path = directory.appendingPathComponent("in.jsonl").path
        try (0..<2_000).map { "{\"user\":\"u\($0 % 7)\",\"n\":\($0),\"ts\":\($0 * 100)}" }.joined(separator: "\n")
            .appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testPartitionsOnThreadsAndAnAggregateSplitByDefaultFreeEverything() throws {
        let input = try records()
        let out = directory.appendingPathComponent("out.jsonl").path
        for ops in [
            "[ { partitionBy: { key: .user, partitions: 4, threads: 2, ops: [ { map: .n } ] } } ]",
            "[ { aggregate: { by: .user, fields: { n: count } } } ]",
        ] {
            let result = try runChecked("source: { file: { path: \(input) } }\nops: \(ops)\nsink: { file: \(out) }\n")
            XCTAssertEqual(result.status, 0, "\(ops): \(result.stderr)")
        }
        let eventTime = try runChecked(
            """
            source: { file: { path: \(input) } }
            eventTime: { time: .ts, maxDelay: 1s }
            ops: [ { aggregate: { by: .user, every: 1m, fields: { n: count } } } ]
            sink: { file: \(out) }
            """)
        XCTAssertEqual(eventTime.status, 0, eventTime.stderr)
    }

    func testARunThatFailsWhileStandardInputIsReadFreesEverything() throws {
        let result = try runChecked(
            "source: { stdin: jsonl }\nops: [ { map: . * 2 } ]\nsink: stdout\n", stdin: "1\n\"x\"\n3\n")
        XCTAssertEqual(result.status, 1, result.stderr)
        assertContains(result.stderr, "cannot apply '*' to string \"x\"")
        XCTAssertFalse(result.stderr.contains("leak check"), result.stderr)
    }

    func testAProgramSourceStoppedByTakeFreesEverythingWithoutATrap() throws {
        let script = directory.appendingPathComponent("count.py")
        try """
        import json, time
        n = 0
        while True:
            print(json.dumps(n), flush=True)
            n += 1
            time.sleep(0.01)
        """.write(to: script, atomically: true, encoding: .utf8)
        let result = try runChecked("source: { exec: [python3, \(script.path)] }\nops: [ { take: 3 } ]\nsink: stdout\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "0\n1\n2\n")
    }
}
