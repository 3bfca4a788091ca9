import Components
import Foundation
import XCTest

/// The file sink when a run is killed: SIGKILL leaves only whole lines; SIGTERM writes every
/// element the sink accepted before it exits.
final class FileSinkSignalTests: BinaryTestCase {

    func testSIGKILLLeavesOnlyWholeLines() throws {
        // 600,000 records of about 200 bytes: a run takes long enough to be killed mid-way.
        var input = Data()
        let padding = String(repeating: "x", count: 150)
        for i in 0..<600_000 {
            input.append(Data("{\"id\": \(i), \"pad\": \"\(padding)\", \"text\": \"line \\\"\(i)\\\"\"}\n".utf8))
        }
        try input.write(to: directory.appendingPathComponent("in.jsonl"))
        try
            "source: { fixture: in.jsonl }\nops: [{ map: { id: .id, pad: .pad, text: .text } }]\nsink: { file: out.jsonl }\n"
            .write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        var killedMidWrite = 0
        for delay in [0.25, 0.4, 0.55] {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("out.jsonl"))
            let process = try startRivulet(
                ["run", directory.appendingPathComponent("p.yaml").path], output: .null, error: .null)
            Thread.sleep(forTimeInterval: delay)
            process.send(SIGKILL)
            XCTAssertEqual(process.wait(), .signalled(SIGKILL))
            let output = (try? Data(contentsOf: directory.appendingPathComponent("out.jsonl"))) ?? Data()
            guard !output.isEmpty else { continue }
            XCTAssertEqual(output.last, 0x0A, "the file ends with a whole line (killed after \(delay) s)")
            let lines = output.split(separator: 0x0A)
            XCTAssertLessThan(lines.count, 600_000, "the run was killed before the end")
            killedMidWrite += 1
            for (index, line) in lines.enumerated() {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    return XCTFail("line \(index + 1) is not a whole JSON record")
                }
                XCTAssertEqual(object["id"] as? Int, index)
            }
        }
        XCTAssertGreaterThan(killedMidWrite, 0, "at least one kill landed while the file was being written")
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
        // Lines that would cross a page boundary are padded with spaces; the records are what count.
        XCTAssertEqual(
            lines.dropLast().map { String($0.reversed().drop { $0 == " " }.reversed()) },
            (0..<accepted).map { "{\"n\":\($0)}" })
    }

    func testNoLineCrossesAPageBoundaryAndPaddingIsOnlySpaces() throws {
        // Lines of 100 bytes: 40 per 4 KiB page would leave 96 bytes, so every page ends with padding.
        var input = Data()
        for i in 0..<1000 {
            input.append(
                Data("{\"i\": \(i), \"pad\": \"\(String(repeating: "p", count: 70 - String(i).count))\"}\n".utf8))
        }
        try input.write(to: directory.appendingPathComponent("in.jsonl"))
        let lines = "source: { fixture: in.jsonl }\nsink: { file: out.jsonl }\n"
        try lines.write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        let result = try runRivulet(["run", directory.appendingPathComponent("p.yaml").path, "--clock", "virtual"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let output = try Data(contentsOf: directory.appendingPathComponent("out.jsonl"))
        var offset = 0
        for (index, line) in output.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().enumerated() {
            let start = offset
            let end = offset + line.count + 1
            XCTAssertEqual(start / 4096, (end - 1) / 4096, "line \(index + 1) crosses a page boundary")
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            XCTAssertEqual(object["i"] as? Int, index)
            offset = end
        }
        XCTAssertEqual(offset, output.count)
        XCTAssertGreaterThan(output.count, 1000 * 80, "the records are all there")
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
