import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet run`, as a user runs it: output, exit codes, options and signals.
final class RunCommandTests: XCTestCase {
    private func pipeline(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-run-\(UUID().uuidString).yaml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }

    func testRunsOnTheRealClockAndPrintsJSONLines() throws {
        let path = Repository.root.appendingPathComponent("Pipelines/search-as-you-type.yaml").path
        let started = Date()
        let result = try runRivulet(["run", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"query\":\"climate\",\"results\":21}\n{\"query\":\"weathe\",\"results\":18}\n")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 2.5, "the real clock takes the pipeline's 2.6 s")
    }

    /// The NATS, PostgreSQL and SQLite libraries (and the twenty the first two bring) are loaded
    /// by a run's first connection or database, not at every start (CNATS, CPostgres, CSQLite): a
    /// run maps none of them, and one keeping state maps SQLite's only.
    func testARunLoadsOnlyTheClientLibrariesItUses() throws {
        // The engine reads its own memory map.
        let path = try pipeline(
            """
            source: { file: /proc/self/maps }
            ops:
              - filter: 'matches(., "libnats|libpq|libgnutls|libsqlite3")'
              - map: 'extract(., "lib(nats|pq|gnutls|sqlite3)")'
              - distinctUntilChanged
            sink: stdout
            """)
        let plain = try runRivulet(["run", path])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(plain.stdout, "")
        let store = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rivulet-maps-\(UUID().uuidString).db")
        addTeardownBlock {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
        }
        let keeping = try runRivulet(["run", path, "--state", store.path])
        XCTAssertEqual(keeping.status, 0, keeping.stderr)
        XCTAssertEqual(keeping.stdout, "[\"sqlite3\"]\n")
    }

    func testVirtualClockRunsAtOnceWithTheSameOutput() throws {
        let path = Repository.root.appendingPathComponent("Pipelines/search-as-you-type.yaml").path
        let started = Date()
        let result = try runRivulet(["run", path, "--clock", "virtual"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"query\":\"climate\",\"results\":21}\n{\"query\":\"weathe\",\"results\":18}\n")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.0)
    }

    func testARunTimeFailureExitsOneNamingTheOperatorAndPlace() throws {
        let path = try pipeline(
            "source: { events: [{ at: 0ms, next: \"abc\" }, { at: 10ms, next: 42 }] }\nops:\n  - map: len(.)\nsink: stdout\n"
        )
        let result = try runRivulet(["run", path, "--clock", "virtual"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "3\n", "what was accepted before the failure is written")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            lines.first,
            "\(path):3:5: error: map: len() expects a string, list or object, got number 42 in 'len(.)' (element: 42)"
        )
        XCTAssertEqual(lines.count, 2, result.stderr)
        XCTAssertTrue(lines[1].hasPrefix("run failed: 2 elements read, 1 written, 1 error in "), result.stderr)
    }

    func testAnInvalidFileExitsTwoAndRunsNothing() throws {
        let path = try pipeline("source: { events: [{ at: 0ms, next: a }] }\nops: [{ debounse: 1s }]\nsink: stdout\n")
        let result = try runRivulet(["run", path])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.contains("did you mean 'debounce'?"))
    }

    func testAComponentThatCannotBeBuiltExitsTwoWithItsPlace() throws {
        let path = try pipeline("source: { fixture: missing.json }\nsink: stdout\n")
        let result = try runRivulet(["run", path])
        XCTAssertEqual(result.status, 2)
        assertContains(result.stderr, ":1:20: error: fixture: cannot read fixture file 'missing.json'")
    }

    func testBadOptionValuesExitTwoWithAMessage() throws {
        let path = try pipeline("source: { interval: 1s }\nsink: stdout\n")
        let until = try runRivulet(["run", path, "--until", "soon"])
        XCTAssertEqual(until.status, 2)
        assertContains(until.stderr, "--until expects a duration such as 10s, got 'soon'")
        let drain = try runRivulet(["run", path, "--drain"])
        XCTAssertEqual(drain.status, 2)
        assertContains(drain.stderr, "--drain needs --state")
        let clock = try runRivulet(["run", path, "--clock", "sundial"])
        XCTAssertEqual(clock.status, 2)
        assertContains(clock.stderr, "sundial")
        XCTAssertFalse(clock.stderr.contains("Fatal error"))
        // Durations beyond what a clock can hold are refused, not a trap.
        let huge = try runRivulet(["run", path, "--until", "3000000h"])
        XCTAssertEqual(huge.status, 2, huge.stderr)
        assertContains(huge.stderr, "--until expects a duration such as 10s, got '3000000h'")
        let withDebounce = try pipeline(
            "source: { interval: 1s }\nops: [{ take: 1 }, { debounce: 1s }]\nsink: stdout\n")
        let set = try runRivulet(["run", withDebounce, "--set", "ops.1.debounce=99999999999h"])
        XCTAssertEqual(set.status, 2, set.stderr)
        assertContains(set.stderr, "the longest is 100000h")
    }

    func testSetOverridesAValueAndUntilStopsTheRun() throws {
        let path = try pipeline("source: { interval: 1s }\nops: [{ map: . * 10 }]\nsink: stdout\n")
        let result = try runRivulet([
            "run", path, "--clock", "virtual", "--until", "350ms", "--set", "source.interval=100ms",
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "0\n10\n20\n")
        let wrong = try runRivulet(["run", path, "--set", "source.intervall=100ms"])
        XCTAssertEqual(wrong.status, 2)
        assertContains(wrong.stderr, "found 'interval' and 'intervall'")
        let outOfRange = try runRivulet(["run", path, "--set", "ops.3.map=1"])
        XCTAssertEqual(outOfRange.status, 2)
        assertContains(outOfRange.stderr, "'3' is not an index of this list (0 to 0)")
        let malformed = try runRivulet(["run", path, "--set", "nonsense"])
        XCTAssertEqual(malformed.status, 2)
        assertContains(malformed.stderr, "--set expects key=value")
    }

    func testSetTakesYAMLValuesAndMakesKeysTheFileDoesNotHave() throws {
        let path = try pipeline("source: { events: [{ at: 0ms, next: 1 }] }\nops: [{ map: . * 10 }]\nsink: stdout\n")
        let replaced = try runRivulet(
            ["run", path, "--set", "source={stdin: jsonl}", "--set", "ops.0.map=\"{n: .}\""], stdin: "3\n4\n")
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertEqual(replaced.stdout, "{\"n\":3}\n{\"n\":4}\n")

        let http = try pipeline("source: { http: { url: \"http://127.0.0.1:9/x\" } }\nsink: stdout\n")
        let once = try runRivulet(["run", http, "--set", "source.http.retry.max=1"])
        XCTAssertEqual(once.status, 1)
        assertContains(once.stderr, "connection refused")
        XCTAssertFalse(once.stderr.contains("attempt"), "max: 1 is one attempt in all: \(once.stderr)")
        let twice = try runRivulet(
            ["run", http, "--set", "source.http.retry={max: 2, backoff: 1ms}"])
        assertContains(twice.stderr, "attempt 2 of 2", "(after 2 attempts)")

        let broken = try runRivulet(["run", path, "--set", "source={stdin: [jsonl}"])
        XCTAssertEqual(broken.status, 2)
        XCTAssertTrue(
            broken.stderr.hasPrefix("--set:1:15: error: --set source: the value is not valid YAML"), broken.stderr)
        XCTAssertFalse(broken.stderr.contains("events"), "no line of the file is shown for it")
    }

    func testADashReadsThePipelineFromStandardInputWithPathsFromTheWorkingDirectory() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-stdin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        try "{\"a\":1}\n{\"a\":2}\n".write(
            to: folder.appendingPathComponent("in.jsonl"), atomically: true, encoding: .utf8)
        let shell = try ChildProcess(
            executable: "/bin/sh",
            arguments: [
                "-c",
                "cd '\(folder.path)' && printf 'source: { fixture: in.jsonl }\\nops: [{ map: .a + 1 }]\\nsink: stdout\\n' | "
                    + "'\(productsDirectory().appendingPathComponent("rivulet").path)' run -",
            ])
        let result = shell.communicate(timeout: 60)
        XCTAssertEqual(result.termination, .exited(0), String(decoding: result.standardError, as: UTF8.self))
        XCTAssertEqual(String(decoding: result.standardOutput, as: UTF8.self), "2\n3\n")
        let invalid = try runRivulet(["run", "-"], stdin: "source: { fixtur: in.jsonl }\nsink: stdout\n")
        XCTAssertEqual(invalid.status, 2)
        XCTAssertTrue(invalid.stderr.hasPrefix("<stdin>:1:11: error: unknown source 'fixtur'"), invalid.stderr)
    }

    func testJSONLinesReadAsOneDocumentSuggestTheJSONLinesFormat() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-\(UUID().uuidString).log")
        try "{\"a\":1}\n{\"a\":2}\n".write(to: log, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(at: log) }
        let result = try runRivulet(["run", try pipeline("source: { fixture: \(log.path) }\nsink: stdout\n")])
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "at byte 8; it holds one JSON value per line: add format: jsonl")
    }

    func testTracePrintsEveryOperatorsEventsAndATimeline() throws {
        let path = try pipeline(
            "source: { events: { marbles: \"ab-c|\", tick: 100ms } }\nops:\n  - filter: . != 'b'\n  - map: upper(.)\nsink: stdout\n"
        )
        let result = try runRivulet(["run", path, "--clock", "virtual", "--trace"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout, "\"A\"\n\"C\"\n")
        assertContains(
            result.stderr, "trace      100ms main#source events: next \"b\"", "trace      300ms main#1 map: next \"C\"",
            "timeline 0ms .. 400ms")
        let filterLine = result.stderr.split(separator: "\n").first { $0.hasPrefix("main#0 filter") }
        XCTAssertEqual(
            filterLine.map(String.init),
            "main#0 filter       o--------------------------------------------o--------------|")
    }

    /// A stop signal ends a read spread over two threads (`parallel:`) within a few hundred lines,
    /// not at the file's end (the loop asks about an interruption every 256 lines): what was
    /// written is whole lines, in order, a short prefix of the whole output. Nobody reads standard
    /// output until the signal, so the run waits on a full pipe when it comes.
    func testASignalStopsAParallelReadSoonAndItsOutputIsAWholePrefix() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rivulet-run-\(UUID().uuidString).jsonl")
        let lines = (0..<400_000).map { #"{"id": \#($0), "stars": \#($0 % 50)}"# }
        try (lines.joined(separator: "\n") + "\n").write(to: data, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(at: data) }
        let path = try pipeline(
            "parallel: 2\nsource: { fixture: \(data.path) }\nops:\n  - filter: .stars >= 25\n  - map: { id: .id }\n"
                + "sink: stdout\n")
        let process = try startRivulet(["run", path], error: .null)
        Thread.sleep(forTimeInterval: 2)
        process.send(SIGINT)
        let output = process.communicate(timeout: 60)
        XCTAssertEqual(output.termination, .exited(130))
        let written = String(decoding: output.standardOutput, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(written.last, "", "output ends with a whole line")
        let expected = (0..<400_000).filter { $0 % 50 >= 25 }.map { #"{"id":\#($0)}"# }
        XCTAssertEqual(Array(written.dropLast().map(String.init)), Array(expected.prefix(written.count - 1)))
        XCTAssertLessThan(written.count - 1, expected.count / 4, "stopped soon, not at the file's end")
    }

    func testSIGINTAndSIGTERMStopTheRunFlushedWithTheirExitCodes() throws {
        let path = try pipeline("source: { interval: 50ms }\nsink: stdout\n")
        for (signal, expected) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            let process = try startRivulet(["run", path], error: .null)
            // Long enough for four elements beside another shard's load (a debug engine takes up
            // to half a second to start there; 0.4 s once gave only two).
            Thread.sleep(forTimeInterval: 1.2)
            process.send(signal)
            let output = process.communicate(timeout: 60)
            XCTAssertEqual(output.termination, .exited(expected))
            let lines = String(decoding: output.standardOutput, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false)
            XCTAssertGreaterThanOrEqual(lines.count, 5, "the elements before the signal were written")
            XCTAssertEqual(lines.last, "", "output ends with a whole line")
            XCTAssertEqual(lines.dropLast().map { Int($0) }, (0..<(lines.count - 1)).map { $0 })
        }
    }
}
