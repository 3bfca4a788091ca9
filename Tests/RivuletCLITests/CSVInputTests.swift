import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// CSV in, through the binary: standard input read as records of its header, typed on request,
/// a bad record skipped or failing the run as `onError` says.
final class CSVInputTests: BinaryTestCase {
    private func pipeline(_ text: String) throws -> String {
        let path = directory.appendingPathComponent("csv-\(UUID().uuidString).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testStandardInputReadAsCSVRecordsOfItsHeader() throws {
        let input = "city,temp\r\n\"Paris, FR\",21.5\r\nOslo,-3\r\n"
        let typed = try pipeline("source: { stdin: { format: csv, numbers: true } }\nsink: stdout\n")
        let read = try runRivulet(["run", typed], stdin: input)
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout, "{\"city\":\"Paris, FR\",\"temp\":21.5}\n{\"city\":\"Oslo\",\"temp\":-3}\n")
        // The virtual clock reads standard input at subscription: the same records.
        let virtual = try runRivulet(["run", typed, "--clock", "virtual"], stdin: input)
        XCTAssertEqual(virtual.stdout, read.stdout, virtual.stderr)

        let strict = try pipeline("source: { stdin: { format: csv } }\nsink: stdout\n")
        let failed = try runRivulet(["run", strict], stdin: "a,b\n1,2\n3\n4,5\n")
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertEqual(failed.stdout, "{\"a\":\"1\",\"b\":\"2\"}\n")
        assertContains(failed.stderr, "standard input line 3: 1 field where the header has 2")
        let skipping = try pipeline("source: { stdin: { format: csv }, onError: skip }\nsink: stdout\n")
        let skipped = try runRivulet(["run", skipping], stdin: "a,b\n1,2\n3\n4,5\n")
        XCTAssertEqual(skipped.status, 0, skipped.stderr)
        XCTAssertEqual(skipped.stdout, "{\"a\":\"1\",\"b\":\"2\"}\n{\"a\":\"4\",\"b\":\"5\"}\n")
    }
}
