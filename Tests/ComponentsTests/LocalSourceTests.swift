import Components
import Foundation
@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

/// `fixture` read from real files, on a virtual clock.
final class LocalSourceTests: LeakCheckingTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rivulet-fixtures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
        super.tearDown()
    }

    private func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testJSONArrayGivesOneElementEachAndWholeGivesTheDocument() throws {
        let path = try write("items.json", "[1, {\"a\": \"日本\"}, [2]]")
        let each = try PipelineHarness().run("source: { fixture: \(path) }\nsink: record\n")
        XCTAssertEqual(each.events(), ["0: 1", "0: {\"a\":\"日本\"}", "0: [2]", "0: completed"])
        let whole = try PipelineHarness().run("source: { fixture: { path: \(path), whole: true } }\nsink: record\n")
        XCTAssertEqual(whole.events(), ["0: [1,{\"a\":\"日本\"},[2]]", "0: completed"])
    }

    func testYAMLAndJSONLinesWithPacing() throws {
        let yaml = try write("items.yaml", "- { name: a }\n- { name: b }\n")
        let harness = try PipelineHarness().run("source: { fixture: { path: \(yaml), every: 100ms } }\nsink: record\n")
        XCTAssertEqual(harness.events(), ["100: {\"name\":\"a\"}", "200: {\"name\":\"b\"}", "200: completed"])
        let lines = try write("items.jsonl", "{\"n\": 1}\n\n{\"n\": 2}\r\n{\"n\": 3}")
        let jsonl = try PipelineHarness().run("source: { fixture: \(lines) }\nops: [{ map: .n }]\nsink: record\n")
        XCTAssertEqual(
            jsonl.events(), ["0: 1", "0: 2", "0: 3", "0: completed"],
            "blank lines skipped, CRLF and a last line without newline read")
        let paced = try PipelineHarness().run(
            "source: { fixture: { path: \(lines), every: 1s } }\nops: [{ map: .n }]\nsink: record\n")
        XCTAssertEqual(paced.events(), ["1000: 1", "2000: 2", "3000: 3", "4000: completed"])
    }

    func testACSVFixtureGivesARecordAnElementPacedOrNot() throws {
        let csv = try write("cities.csv", "city,temp\r\n\"Paris, FR\",21.5\r\n\nOslo,-3\n")
        let typed = try PipelineHarness().run(
            "source: { fixture: { path: \(csv), numbers: true, every: 1s } }\nsink: record\n")
        XCTAssertEqual(
            typed.events(),
            [#"1000: {"city":"Paris, FR","temp":21.5}"#, #"2000: {"city":"Oslo","temp":-3}"#, "2000: completed"])
        let lists = try PipelineHarness().run("source: { fixture: { path: \(csv), header: false } }\nsink: record\n")
        XCTAssertEqual(
            lists.events(), [#"0: ["city","temp"]"#, #"0: ["Paris, FR","21.5"]"#, #"0: ["Oslo","-3"]"#, "0: completed"])
        let bad = try write("bad.csv", "a,b\n1,2\n3\n")
        let failed = try PipelineHarness().run("source: { fixture: \(bad) }\nsink: record\n")
        XCTAssertEqual(failed.events().count, 1)
        XCTAssertTrue(failed.events()[0].contains("bad.csv line 3: 1 field where the header has 2"), failed.events()[0])
    }

    func testFieldsPassedThroughKeepTheirTextAndComputedValuesAreWrittenOnce() throws {
        let lines = try write(
            "exact.jsonl", #"{"price": 1.50, "name": "caf\u00e9", "n": 1E3, "tags": [ 1 , 2 ]}"# + "\n")
        let copied = try PipelineHarness().run(
            "source: { fixture: \(lines) }\nops:\n  - map: { price: .price, name: .name, tags: .tags }\nsink: record\n")
        XCTAssertEqual(
            copied.events(), [#"0: {"price":1.50,"name":"caf\u00e9","tags":[1,2]}"#, "0: completed"],
            "a field's text is copied as written (white space outside strings dropped)")
        let mixed = try PipelineHarness().run(
            "source: { fixture: \(lines) }\nops:\n  - map: { price: .price, twice: .n * 2 }\n  - filter: .twice > 1000\n"
                + "sink: record\n")
        XCTAssertEqual(mixed.events(), [#"0: {"price":1.50,"twice":2000.0}"#, "0: completed"])
        let unchanged = try PipelineHarness().run("source: { fixture: \(lines) }\nsink: record\n")
        XCTAssertEqual(unchanged.events().first, #"0: {"price":1.50,"name":"caf\u00e9","n":1E3,"tags":[1,2]}"#)
    }

    func testAMalformedLineFailsNamingTheFileAndLine() throws {
        let lines = try write("bad.jsonl", "{\"n\": 1}\n{\"n\": }\n{\"n\": 3}\n")
        let harness = try PipelineHarness().run("source: { fixture: \(lines) }\nsink: record\n")
        XCTAssertEqual(harness.events().count, 2)
        XCTAssertTrue(
            harness.events()[1].contains("bad.jsonl line 2: unexpected '}', expected a value at byte 6"),
            harness.events()[1])
    }

    func testEventsFromATimelineFile() throws {
        let yaml = try write(
            "typing.yaml", "- { at: 0ms, next: cl }\n- { at: 150ms, next: climate }\n- { at: 200ms, complete: true }\n")
        let harness = try PipelineHarness().run("source: { events: { file: \(yaml) } }\nsink: record\n")
        XCTAssertEqual(harness.events(), ["0: \"cl\"", "150: \"climate\"", "200: completed"])
        let json = try write("bad.json", "[{\"at\": \"10ms\"}]")
        XCTAssertThrowsError(try PipelineHarness().run("source: { events: { file: \(json) } }\nsink: record\n")) {
            error in
            XCTAssertTrue(
                "\(error)".contains("timeline entry 1 needs exactly one of next, error, complete"), "\(error)")
        }
    }

    func testAMissingFileIsAnErrorNamingIt() throws {
        XCTAssertThrowsError(try PipelineHarness().run("source: { fixture: no-such-file.json }\nsink: record\n")) {
            error in
            XCTAssertTrue("\(error)".contains("cannot read fixture file 'no-such-file.json'"), "\(error)")
        }
    }
}
