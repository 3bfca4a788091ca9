import BinaryTestSupport
import Components
import Foundation
import XCTest

/// The file sink when a run is killed: SIGKILL can leave a partial last line, which the next run
/// adding to the file cuts; SIGTERM writes every element the sink accepted before it exits; lines
/// reach the file within `flushAfter`, with nothing added to them.
final class FileSinkSignalTests: BinaryTestCase {

    func testSIGKILLThenAppendLeavesOnlyWholeLines() throws {
        // 600,000 records of about 200 bytes: a run takes long enough to be killed mid-way. Each
        // killed run's file is added to by a second run (`mode: append`), in JSON Lines and CSV.
        var input = Data()
        let padding = String(repeating: "x", count: 150)
        for i in 0..<600_000 {
            input.append(Data("{\"id\": \(i), \"pad\": \"\(padding)\", \"text\": \"line \\\"\(i)\\\"\"}\n".utf8))
        }
        try input.write(to: directory.appendingPathComponent("in.jsonl"))
        try "{\"id\": -1, \"pad\": \"after\", \"text\": \"added\"}\n".write(
            to: directory.appendingPathComponent("more.jsonl"), atomically: true, encoding: .utf8)
        var killedMidWrite = 0
        for (format, delay) in [("jsonl", 0.25), ("csv", 0.3), ("jsonl", 0.45), ("csv", 0.55)] {
            let out = directory.appendingPathComponent("out.\(format)")
            try? FileManager.default.removeItem(at: out)
            for (name, fixture) in [("p", "in.jsonl"), ("q", "more.jsonl")] {
                try """
                source: { fixture: \(fixture) }
                ops: [{ map: { id: .id, pad: .pad, text: .text } }]
                sink: { file: { path: out.\(format), mode: append } }
                """.write(to: directory.appendingPathComponent(name + ".yaml"), atomically: true, encoding: .utf8)
            }
            let process = try startRivulet(
                ["run", directory.appendingPathComponent("p.yaml").path], output: .null, error: .null)
            Thread.sleep(forTimeInterval: delay)
            process.send(SIGKILL)
            XCTAssertEqual(process.wait(), .signalled(SIGKILL))
            let killed = (try? Data(contentsOf: out)) ?? Data()
            guard !killed.isEmpty else { continue }
            killedMidWrite += 1
            let added = try runRivulet(["run", directory.appendingPathComponent("q.yaml").path])
            XCTAssertEqual(added.status, 0, added.stderr)
            if killed.last != 0x0A {
                XCTAssertTrue(added.stderr.contains("ended in a partial line"), added.stderr)
            }
            let output = try Data(contentsOf: out)
            XCTAssertEqual(output.last, 0x0A, "the file ends with a whole line (\(format), killed after \(delay) s)")
            var lines = output.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
            if format == "csv" {
                XCTAssertEqual(lines.first, "id,pad,text")
                lines.removeFirst()
            }
            XCTAssertLessThan(lines.count, 600_000, "the run was killed before the end")
            for (index, line) in lines.enumerated() {
                let id = index == lines.count - 1 ? -1 : index
                if format == "csv" {
                    let text = id == -1 ? "added" : "\"line \"\"\(id)\"\"\""
                    XCTAssertEqual(line, "\(id),\(id == -1 ? "after" : padding),\(text)", "line \(index + 2)")
                } else {
                    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    XCTAssertEqual(object?["id"] as? Int, id, "line \(index + 1) is a whole record")
                }
            }
        }
        XCTAssertGreaterThan(killedMidWrite, 1, "kills landed while the file was being written")
    }

    func testAPartialLastLineIsCutBeforeAddingAndShownInAWarning() throws {
        try "{\"n\":1}\n{\"n\":2}\n{\"n\":3".write(
            to: directory.appendingPathComponent("out.jsonl"), atomically: true, encoding: .utf8)
        try "n,m\n1,2\n3,4\n5".write(to: directory.appendingPathComponent("out.csv"), atomically: true, encoding: .utf8)
        try "{\"n\":9".write(to: directory.appendingPathComponent("only.jsonl"), atomically: true, encoding: .utf8)
        try """
        source: { events: [{ at: 0ms, next: { n: 7, m: 8 } }, { at: 0ms, complete: true }] }
        sinks:
          - { file: { path: out.jsonl, mode: append } }
          - { file: { path: out.csv, mode: append } }
          - { file: { path: only.jsonl, mode: append } }
        """.write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        let result = try runRivulet(["run", directory.appendingPathComponent("p.yaml").path, "--clock", "virtual"])
        XCTAssertEqual(result.status, 0, result.stderr)
        func read(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        XCTAssertEqual(try read("out.jsonl"), "{\"n\":1}\n{\"n\":2}\n{\"n\":7,\"m\":8}\n")
        XCTAssertEqual(try read("out.csv"), "n,m\n1,2\n3,4\n7,8\n", "the header is not written again")
        XCTAssertEqual(try read("only.jsonl"), "{\"n\":7,\"m\":8}\n")
        XCTAssertTrue(result.stderr.contains(#"ended in a partial line (6 bytes"#), result.stderr)
        XCTAssertTrue(result.stderr.contains(#""{\"n\":3""#), "the cut text is shown: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains(#""5""#), result.stderr)
    }

    func testTwoRunsWriteTheSameBytesWithNoPadding() throws {
        // Lines of 100 bytes: 40 per 4 KiB page would leave 96 bytes, where padding used to go.
        var input = Data()
        for i in 0..<1000 {
            input.append(
                Data("{\"i\": \(i), \"pad\": \"\(String(repeating: "p", count: 70 - String(i).count))\"}\n".utf8))
        }
        try input.write(to: directory.appendingPathComponent("in.jsonl"))
        try "source: { fixture: in.jsonl }\nsink: { file: out.jsonl }\n".write(
            to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        var outputs: [Data] = []
        for clock in ["virtual", "real"] {
            let result = try runRivulet(["run", directory.appendingPathComponent("p.yaml").path, "--clock", clock])
            XCTAssertEqual(result.status, 0, result.stderr)
            outputs.append(try Data(contentsOf: directory.appendingPathComponent("out.jsonl")))
        }
        XCTAssertEqual(outputs[0], outputs[1], "two runs, byte for byte")
        let lines = outputs[0].split(separator: 0x0A, omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 1001)
        for (index, line) in lines.dropLast().enumerated() {
            XCTAssertNotEqual(line.last, 0x20, "line \(index + 1) ends in a space")
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            XCTAssertEqual(object["i"] as? Int, index)
        }
    }

    func testALiveSourcesLinesReachTheFileWithinFlushAfter() throws {
        // A followed log, as `tail -f` would show it: its lines are in the output within a second
        // by default, and not before `flushAfter` when that is longer.
        let log = directory.appendingPathComponent("access.log")
        try "GET /a\nGET /b\n".write(to: log, atomically: true, encoding: .utf8)
        for (name, flushAfter) in [("soon", ""), ("later", ", flushAfter: 30s")] {
            try """
            source: { file: { path: access.log, follow: true } }
            sink: { file: { path: \(name).txt\(flushAfter) } }
            """.write(to: directory.appendingPathComponent(name + ".yaml"), atomically: true, encoding: .utf8)
        }
        let soon = try startRivulet(["run", directory.appendingPathComponent("soon.yaml").path], output: .null)
        let later = try startRivulet(["run", directory.appendingPathComponent("later.yaml").path], output: .null)
        func lines(_ name: String) -> [String] {
            let text = (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }
        let started = Date()
        while lines("soon.txt").count < 2 && Date().timeIntervalSince(started) < 10 {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(lines("soon.txt"), [#""GET /a""#, #""GET /b""#])
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5, "written within about a second")
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        handle.write(Data("GET /c\n".utf8))
        try handle.close()
        let appended = Date()
        while lines("soon.txt").count < 3 && Date().timeIntervalSince(appended) < 10 {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(lines("soon.txt").last, #""GET /c""#)
        XCTAssertLessThan(Date().timeIntervalSince(appended), 2.5, "a new line, within about a second")
        XCTAssertEqual(lines("later.txt"), [], "flushAfter: 30s holds the lines")
        later.send(SIGTERM)
        XCTAssertEqual(later.communicate(timeout: 30).termination, .exited(143))
        XCTAssertEqual(lines("later.txt").count, 3, "a stop writes them")
        soon.send(SIGTERM)
        XCTAssertEqual(soon.communicate(timeout: 30).termination, .exited(143))
    }

    func testSIGTERMWritesEveryAcceptedElement() throws {
        try "source: { interval: 2ms }\nops: [{ map: { n: . } }]\nsink: { file: out.jsonl }\n"
            .write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        let process = try startRivulet(
            ["run", directory.appendingPathComponent("p.yaml").path, "--trace"], output: .null)
        Thread.sleep(forTimeInterval: 0.5)
        process.send(SIGTERM)
        let output = process.communicate(timeout: 60)
        let trace = String(decoding: output.standardError, as: UTF8.self)
        XCTAssertEqual(output.termination, .exited(143))
        // Every element the map passed on (so the sink accepted it) is in the file, in order.
        let accepted = trace.split(separator: "\n").filter { $0.contains("main#0 map: next") }.count
        let lines = try String(contentsOf: directory.appendingPathComponent("out.jsonl"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertGreaterThan(accepted, 20)
        XCTAssertEqual(lines.last, "", "ends with a whole line")
        XCTAssertEqual(lines.count - 1, accepted)
        XCTAssertEqual(lines.dropLast().map(String.init), (0..<accepted).map { "{\"n\":\($0)}" })
    }

    func testJSONIsRenamedIntoPlaceAndCSVQuotes() throws {
        try """
        source: { events: [{ at: 0ms, next: { a: 1, b: "x, \\"y\\"" } }, { at: 0ms, next: { a: 2, b: z } }, { at: 0ms, complete: true }] }
        sinks:
          - { file: { path: out.json } }
          - { file: { path: out.csv } }
          - { file: { path: out.jsonl, mode: append } }
          - { file: { path: picked.csv, columns: [b, missing] } }
        """.write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let result = try runRivulet(["run", directory.appendingPathComponent("p.yaml").path, "--clock", "virtual"])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let json = try String(contentsOf: directory.appendingPathComponent("out.json"), encoding: .utf8)
        XCTAssertEqual(json, "[\n{\"a\":1,\"b\":\"x, \\\"y\\\"\"},\n{\"a\":2,\"b\":\"z\"}\n]\n")
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Any])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains(".tmp-")
        }
        XCTAssertEqual(leftovers, [], "the temporary file was renamed")
        let csv = try String(contentsOf: directory.appendingPathComponent("out.csv"), encoding: .utf8)
        XCTAssertEqual(csv, "a,b\n1,\"x, \"\"y\"\"\"\n2,z\n")
        let picked = try String(contentsOf: directory.appendingPathComponent("picked.csv"), encoding: .utf8)
        XCTAssertEqual(
            picked, "b,missing\n\"x, \"\"y\"\"\",\nz,\n", "chosen columns, in order; a missing field is empty")
        let appended = try String(contentsOf: directory.appendingPathComponent("out.jsonl"), encoding: .utf8)
        XCTAssertEqual(appended.split(separator: "\n").count, 4, "append mode kept the first run's lines")
    }
}
