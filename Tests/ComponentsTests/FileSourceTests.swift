import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// The `file` source on real files: read once, or followed on a virtual clock while the test
/// appends, rotates and truncates between ticks.
final class FileSourceTests: LeakCheckingTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "rivulet-files-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    private func append(_ name: String, _ text: String) throws {
        let path = directory + "/" + name
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        handle.closeFile()
    }

    func testReadsGlobbedFilesInNameOrderAsTextOrJSONLines() throws {
        try append("b.log", "two\nthree")
        try append("a.log", "one\n")
        let text = try PipelineHarness().run("source: { file: \"\(directory)/*.log\" }\nsink: record")
        XCTAssertEqual(text.events(), ["0: \"one\"", "0: \"two\"", "0: \"three\"", "0: completed"])
        try append("items.jsonl", "{\"n\":1}\n\n{\"n\":2}\n")
        let json = try PipelineHarness().run("source: { file: \(directory)/items.jsonl }\nsink: record")
        XCTAssertEqual(json.events(), ["0: {\"n\":1}", "0: {\"n\":2}", "0: completed"])
    }

    /// A JSON Lines reader lends each line's object and reuses it once given back: an operator
    /// that holds the line before (`distinctUntilChanged`) or several (`buffer`) must see them as
    /// they were, whichever loop reads them (`file`, `fixture`, a paced `fixture`).
    func testLinesAnOperatorHoldsAreNotOverwrittenByTheLinesAfterThem() throws {
        let lines = [1, 1, 2, 2, 2, 3, 1, 1].map { #"{"n":\#($0),"pad":"\#(String(repeating: "x", count: $0))"}"# }
        try append("runs.jsonl", lines.joined(separator: "\n") + "\n")
        let distinct = [#"{"n":1,"pad":"x"}"#, #"{"n":2,"pad":"xx"}"#, #"{"n":3,"pad":"xxx"}"#, #"{"n":1,"pad":"x"}"#]
        for source in [
            "file: \(directory)/runs.jsonl", "fixture: \(directory)/runs.jsonl",
            "fixture: { path: \(directory)/runs.jsonl, every: 10ms }",
        ] {
            let run = try PipelineHarness().run("source: { \(source) }\nops: [distinctUntilChanged]\nsink: record")
            XCTAssertEqual(
                run.events().map { String($0.drop { $0 != "{" && $0 != "c" }) }, distinct + ["completed"], source)
            let buffered = try PipelineHarness().run(
                "source: { \(source) }\nops: [{ buffer: { timeSpan: 1h, count: 3 } }]\nsink: record")
            XCTAssertEqual(
                buffered.events().map { String($0.drop { $0 != "[" && $0 != "c" }) },
                [
                    "[" + lines[0..<3].joined(separator: ",") + "]", "[" + lines[3..<6].joined(separator: ",") + "]",
                    "[" + lines[6..<8].joined(separator: ",") + "]", "completed",
                ], source)
        }
    }

    func testACSVFileIsReadAsObjectsOfItsHeaderAndABadRecordIsAnElementError() throws {
        try append("hits.csv", "route,ms,note\n/a,12,\"x, y\"\n/b,7.5,plain\n/c,1\n/d,3,\"say \"\"hi\"\"\"\n")
        let read = try PipelineHarness().run(
            "source: { file: { path: \(directory)/hits.csv, numbers: true } }\nsink: record")
        XCTAssertEqual(
            Array(read.events().prefix(2)),
            [#"0: {"route":"/a","ms":12,"note":"x, y"}"#, #"0: {"route":"/b","ms":7.5,"note":"plain"}"#])
        XCTAssertEqual(read.events().count, 3)
        assertContains(read.events().last ?? "", "0: error", "hits.csv line 4: 2 fields where the header has 3")
        let skipped = try PipelineHarness().run(
            "source: { file: { path: \(directory)/hits.csv, format: csv }, onError: skip }\nsink: record")
        XCTAssertEqual(
            skipped.events(),
            [
                #"0: {"route":"/a","ms":"12","note":"x, y"}"#, #"0: {"route":"/b","ms":"7.5","note":"plain"}"#,
                #"0: {"route":"/d","ms":"3","note":"say \"hi\""}"#, "0: completed",
            ])
        try append("plain.txt", "1;2\n3;4\n")
        let lists = try PipelineHarness().run(
            "source: { file: { path: \(directory)/plain.txt, format: csv, header: false, separator: ';' } }\n"
                + "sink: record")
        XCTAssertEqual(lists.events(), [#"0: ["1","2"]"#, #"0: ["3","4"]"#, "0: completed"])
        XCTAssertEqual(
            PipelineHarness().diagnostics(
                "source: { file: { path: \(directory)/plain.txt, format: csv, separator: '::' } }\nsink: record"),
            ["1:116: file: separator must be one character other than a quote or a line break, such as ';'; got '::'"])
    }

    func testAFollowedCSVFileKeepsItsHeaderAndOneReadFromTheEndTakesItFromTheStart() throws {
        try append("live.csv", "k,n\nold,1\n")
        let harness = PipelineHarness()
        let run = try harness.start(
            "source: { file: { path: \(directory)/live.csv, follow: true, from: end, poll: 10ms } }\nsink: record")
        harness.scheduler.advance(to: 5)
        try append("live.csv", "new,2\n")
        harness.scheduler.advance(to: 15)
        try append("live.csv", "newer,3\n")
        harness.scheduler.advance(to: 25)
        XCTAssertEqual(harness.events(), [#"10: {"k":"new","n":"2"}"#, #"20: {"k":"newer","n":"3"}"#])
        run.dispose()
    }

    func testAMalformedLineFailsNamingTheFileAndLine() throws {
        try append("bad.jsonl", "{\"n\":1}\n{oops\n")
        let harness = try PipelineHarness().run("source: { file: \(directory)/bad.jsonl }\nsink: record")
        XCTAssertEqual(harness.events().count, 2)
        XCTAssertTrue(harness.events()[1].contains("bad.jsonl line 2"), harness.events()[1])
    }

    func testAMissingFileIsALintErrorUnlessFollowed() throws {
        XCTAssertEqual(
            PipelineHarness().diagnostics("source: { file: \(directory)/none.log }\nsink: record"),
            ["1:17: file: cannot read the file '\(directory)/none.log'"])
        XCTAssertEqual(
            PipelineHarness().diagnostics(
                "source: { file: { path: \(directory)/none.log, follow: true } }\nsink: record"),
            [])
    }

    func testFollowingHoldsAPartialLineFinishesARotatedFileAndRereadsATruncatedOne() throws {
        try append("app.log", "a1\n")
        let harness = PipelineHarness()
        let run = try harness.start(
            "source: { file: { path: \(directory)/app.log, follow: true, poll: 10ms } }\nsink: record")
        harness.scheduler.advance(to: 5)
        try append("app.log", "a2\na3")
        harness.scheduler.advance(to: 15)
        XCTAssertEqual(harness.events(), ["0: \"a1\"", "10: \"a2\""], "a3 waits for its newline")
        try append("app.log", "-end\n")
        harness.scheduler.advance(to: 25)
        try append("app.log", "a4")
        XCTAssertEqual(rename(directory + "/app.log", directory + "/app.log.1"), 0)
        try append("app.log", "b1\n")
        harness.scheduler.advance(to: 35)
        XCTAssertEqual(Array(harness.events().dropFirst(2)), ["20: \"a3-end\"", "30: \"a4\"", "30: \"b1\""])
        try append("app.log", "b2\n")
        harness.scheduler.advance(to: 45)
        // Cut shorter than what was read: read again from the start.
        XCTAssertEqual(truncate(directory + "/app.log", 0), 0)
        try append("app.log", "c1\n")
        harness.scheduler.advance(to: 55)
        XCTAssertEqual(Array(harness.events().suffix(2)), ["40: \"b2\"", "50: \"c1\""])
        try append("new.log", "ignored: another name\n")
        run.dispose()
    }

    func testFromEndSkipsWhatIsThereAndReadsNewLines() throws {
        try append("app.log", "old\n")
        let harness = PipelineHarness()
        let run = try harness.start(
            "source: { file: { path: \(directory)/app.log, follow: true, from: end, poll: 10ms } }\nsink: record")
        harness.scheduler.advance(to: 5)
        try append("app.log", "new\n")
        harness.scheduler.advance(to: 15)
        XCTAssertEqual(harness.events(), ["10: \"new\""])
        run.dispose()
    }

    /// `app.log` followed on a virtual clock until 5 ms, then `meanwhile` (with the clock), then
    /// stopped and checkpointed: what it emitted, and the checkpoint as a resumed run gets it.
    private func checkpointedRun(meanwhile: (PipelineHarness) throws -> Void = { _ in }) throws -> (
        events: [String], restored: [String: Value]
    ) {
        let first = PipelineHarness()
        var snapshot: Value?
        let taking = Checkpoints(restored: [:], interval: .seconds(60), scheduler: first.scheduler) { snapshot = $0 }
        let run = try first.start(followed, services: [taking])
        first.scheduler.advance(to: 5)
        try meanwhile(first)
        run.dispose()
        taking.checkpoint()
        var restored: [String: Value] = [:]
        for (key, value) in snapshot?.objectValue ?? JSONObject() { restored[key] = value }
        return (first.events(), restored)
    }

    /// What a run resumed from `restored` emits until 5 ms.
    private func resumedRun(from restored: [String: Value]) throws -> [String] {
        let second = PipelineHarness()
        let resuming = Checkpoints(restored: restored, interval: .seconds(60), scheduler: second.scheduler) { _ in }
        let resumed = try second.start(followed, services: [resuming])
        second.scheduler.advance(to: 5)
        resumed.dispose()
        return second.events()
    }

    private var followed: String {
        "source: { file: { path: \(directory)/app.log, follow: true, poll: 10ms } }\nsink: record"
    }

    func testACheckpointKeepsTheInodeAndOffsetAndARotatedFileIsFoundAgain() throws {
        try append("app.log", "a1\na2\n")
        let first = try checkpointedRun()
        // While the pipeline is down: a line is added, then the file is rotated and a new one begun.
        try append("app.log", "a3\n")
        XCTAssertEqual(rename(directory + "/app.log", directory + "/app.log.1"), 0)
        try append("app.log", "b1\n")
        XCTAssertEqual(first.events, ["0: \"a1\"", "0: \"a2\""])
        XCTAssertEqual(try resumedRun(from: first.restored), ["0: \"a3\"", "0: \"b1\""])
    }

    func testACheckpointBetweenARotationAndTheNewFileKeepsTheFinishedFileAtItsEnd() throws {
        try append("app.log", "a1\n")
        // Rotated away, and no new file under the name yet when the source looks, nor when the
        // checkpoint is taken: it must keep the finished file at its end, not at its start.
        let first = try checkpointedRun { harness in
            XCTAssertEqual(rename(directory + "/app.log", directory + "/app.log.1"), 0)
            harness.scheduler.advance(to: 15)
        }
        try append("app.log", "b1\n")
        XCTAssertEqual(first.events, ["0: \"a1\""])
        XCTAssertEqual(try resumedRun(from: first.restored), ["0: \"b1\""], "a1 once")
    }
}
