import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import Synchronization
import XCTest

/// `parallel: N`: the element-wise operators after a JSON Lines fixture run on several threads,
/// and everything a serial run would do happens in the same order at the same line.
final class ParallelLinesTests: LeakCheckingTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rivulet-parallel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
        super.tearDown()
    }

    /// `count` records, a blank line every 997 and a CRLF ending every 101; `replace` swaps in
    /// other text at some lines (from 1).
    private func records(_ count: Int, replacing replace: [Int: String] = [:]) throws -> String {
        var text = ""
        for index in 0..<count {
            if index % 997 == 0 { text += "   \n" }
            let line =
                replace[index + 1 + index / 997 + 1]
                ?? #"{"id": \#(index), "name": "item-\#(index)", "stars": \#(index % 50), "owner": {"login": "u\#(index)", "zero": \#(index % 7)}}"#
            text += line + (index % 101 == 0 ? "\r\n" : "\n")
        }
        let url = directory.appendingPathComponent("records-\(UUID().uuidString).jsonl")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    private func pipeline(_ path: String, parallel: Int, ops: String) -> String {
        "parallel: \(parallel)\nsource: { fixture: \(path) }\nops:\n\(ops)\nsink: record\n"
    }

    private func run(_ path: String, ops: String, parallel: Int, meters: RunMeters? = nil) throws -> PipelineHarness {
        let harness = PipelineHarness()
        harness.meters = meters
        return try harness.run(pipeline(path, parallel: parallel, ops: ops))
    }

    func testTheOutputIsTheSerialOutputElementForElement() throws {
        let path = try records(30_000)
        let ops = """
              - filter: .stars >= 25
              - map: { id: .id, login: .owner.login, double: .stars * 2, name: .name }
              - filter: .id % 3 != 0
            """
        let serial = try run(path, ops: ops, parallel: 1).events()
        XCTAssertEqual(serial.count, 10_000 + 1)
        for workers in [2, 4] {
            XCTAssertEqual(try run(path, ops: ops, parallel: workers).events(), serial, "parallel: \(workers)")
        }
        XCTAssertEqual(serial.first, #"0: {"id":25,"login":"u25","double":50,"name":"item-25"}"#)
    }

    func testTheFileSourceReadsEachOfItsFilesSoToo() throws {
        let first = try records(9_000)
        _ = try records(7_000, replacing: [6_000: "not json"])
        let glob = directory.appendingPathComponent("records-*.jsonl").path
        for onError in ["fail", "skip"] {
            func events(_ workers: Int) throws -> [String] {
                try PipelineHarness().run(
                    """
                    parallel: \(workers)
                    source: { file: { path: "\(glob)", onError: \(onError) } }
                    ops:
                      - filter: .stars < 10
                      - map: { id: .id, login: .owner.login }
                    sink: record
                    """
                ).events()
            }
            let serial = try events(1)
            XCTAssertEqual(try events(2), serial, onError)
            XCTAssertGreaterThan(serial.count, 1_000, onError)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: first))
    }

    /// A line longer than the file source's read buffer (256 KiB) makes the reader grow it; the
    /// batch that takes the grown buffer gives the reader one as large back, and the lines around
    /// it come out as on one thread.
    func testALineLongerThanTheReadBufferComesOutAsOnOneThread() throws {
        let long = #"{"id": -1, "name": ""# + String(repeating: "x", count: 600_000) + #"", "stars": 49}"#
        let path = try records(20_000, replacing: [8_000: long, 8_001: long])
        func events(_ workers: Int) throws -> [String] {
            try PipelineHarness().run(
                """
                parallel: \(workers)
                source: { file: "\(path)" }
                ops:
                  - filter: .stars >= 40
                  - map: { id: .id, size: len(.name) }
                sink: record
                """
            ).events()
        }
        let serial = try events(1)
        XCTAssertTrue(serial.contains { $0.hasSuffix(#"{"id":-1,"size":600000}"#) }, "the long lines are read")
        XCTAssertEqual(try events(2), serial)
    }

    func testTheSourceStillCountsEveryLineItRead() throws {
        let path = try records(5_000)
        let meters = RunMeters(metersOperators: false)
        let harness = try run(path, ops: "  - filter: .stars == 0", parallel: 2, meters: meters)
        XCTAssertEqual(harness.events().count, 100 + 1)
        let source = try XCTUnwrap(meters.components.first { $0.kind == .source })
        XCTAssertEqual(source.elements, 5_000, "the lines the filter dropped count as read")
    }

    func testAMalformedLineFailsAtItsLineAfterEverythingBeforeIt() throws {
        let path = try records(20_000, replacing: [12_345: #"{"id": }"#])
        let ops = "  - map: .id"
        let serial = try run(path, ops: ops, parallel: 1).events()
        let parallel = try run(path, ops: ops, parallel: 2).events()
        XCTAssertEqual(parallel, serial)
        XCTAssertTrue(
            parallel.last?.contains("line 12345: unexpected '}', expected a value") == true, "\(parallel.last!)")
        let skipping = """
            parallel: 2
            source: { fixture: { path: \(path), onError: skip } }
            ops:
              - map: .id
            sink: record
            """
        let skipped = try PipelineHarness().run(skipping).events()
        XCTAssertEqual(skipped.count, 20_000 - 1 + 1, "the malformed line is skipped and the rest read")
        XCTAssertEqual(skipped.last, "0: completed")
    }

    func testAnOperatorsErrorEndsTheStreamAtThatElement() throws {
        let path = try records(20_000)
        let ops = """
              - filter: .id > 9000
              - map: 100 / .owner.zero
            """
        let serial = try run(path, ops: ops, parallel: 1).events()
        let parallel = try run(path, ops: ops, parallel: 4).events()
        XCTAssertEqual(parallel, serial)
        XCTAssertEqual(parallel.count, 2, "9001, then a division by zero at 9002")
        XCTAssertTrue(parallel.last?.contains("p.yaml:5:5: error: map: ") == true, "\(parallel.last!)")
    }

    func testAnOperatorThatEndsEarlyStopsTheWorkersWithoutLosingOrder() throws {
        let path = try records(40_000)
        let ops = """
              - filter: .stars == 7
              - take: 300
            """
        let serial = try run(path, ops: ops, parallel: 1).events()
        XCTAssertEqual(try run(path, ops: ops, parallel: 3).events(), serial)
        XCTAssertEqual(serial.count, 301)
    }

    /// The next buffer is read and decoded while the current one is still emitted: an end, a
    /// malformed line and an operator's error several buffers in hold as in a serial run, and
    /// the batch already started after them is let go.
    func testAnEndSeveralBuffersInLetsTheBatchAfterItGo() throws {
        let path = try records(90_000, replacing: [70_001: #"{"id": ]"#])
        for ops in ["  - filter: .stars == 7\n  - take: 1300", "  - map: .id", "  - map: 1000 / (.id - 61234)"] {
            let serial = try run(path, ops: ops, parallel: 1).events()
            XCTAssertGreaterThan(serial.count, 1_000, ops)
            XCTAssertEqual(try run(path, ops: ops, parallel: 2).events(), serial, ops)
            XCTAssertEqual(try run(path, ops: ops, parallel: 5).events(), serial, ops)
        }
    }

    func testOnlyOperatorsThatFailOnABadElementAndCallNothingTimedOrRandomRunInParallel() throws {
        let loaded = PipelineLoader(registry: PipelineHarness().registry(), environment: [:]).load(
            text: """
                source: { events: [] }
                ops:
                  - map: { a: .x }
                  - map: random(1, 9)
                  - filter: { expression: .x > 1, onError: skip }
                  - map: "{{ .x }}"
                  - filter: len(.name) > 2
                sink: record
                """, path: "p.yaml")
        let operators = try XCTUnwrap(loaded.pipeline?.streams.first?.operators, "\(loaded.diagnostics)")
        XCTAssertEqual(operators.map(PipelineCompiler.runsInParallel), [true, false, false, false, true])
    }

    /// Without `parallel:`, a pipeline that is only a JSON Lines source, operators that may run in
    /// parallel and a sink uses every core it is given; any other runs on one thread.
    func testWithoutParallelASourceStatelessSinkPipelineUsesEveryCore() throws {
        let path = try records(3_000)
        let madeSteps = Mutex(0)
        let counted = ComponentSpec(
            name: "counted", summary: "Passes elements on, counting the steps made.", parameters: [],
            example: "- counted", checkpointing: .stateless,
            factory: .elementwise { _, _ in
                {
                    madeSteps.withLock { $0 += 1 }
                    return { $0 }
                }
            })
        func steps(_ header: String, _ ops: String, cores: Int) throws -> Int {
            madeSteps.withLock { $0 = 0 }
            let harness = PipelineHarness()
            harness.extraComponents = [counted]
            harness.cores = cores
            let events = try harness.run("\(header)source: { fixture: \(path) }\nops:\n\(ops)\nsink: record\n").events()
            XCTAssertEqual(events.count, ops.contains("take") ? 11 : 3_001, ops)
            return madeSteps.withLock { $0 }
        }
        let stateless = "  - filter: .stars >= 0\n  - counted"
        // One step for the pipeline's thread, three for the helpers of overlapping batches.
        XCTAssertEqual(try steps("", stateless, cores: 2), 1 + 3)
        XCTAssertEqual(try steps("", stateless, cores: 1), 1)
        XCTAssertEqual(try steps("parallel: 1\n", stateless, cores: 2), 1)
        XCTAssertEqual(try steps("parallel: 3\n", stateless, cores: 1), 1 + 3 * 2)
        XCTAssertEqual(try steps("", stateless + "\n  - take: 10", cores: 2), 1, "a stateful operator after it")
    }

    func testParallelMustBeAWorkerCount() {
        for bad in ["0", "65", "two", "[2]"] {
            XCTAssertEqual(
                PipelineHarness().diagnostics("parallel: \(bad)\nsource: { events: [] }\nsink: record\n"),
                ["1:11: 'parallel' must be a number of workers from 1 to 64"], bad)
        }
        XCTAssertEqual(PipelineHarness().diagnostics("parallel: 8\nsource: { events: [] }\nsink: record\n"), [])
    }
}
