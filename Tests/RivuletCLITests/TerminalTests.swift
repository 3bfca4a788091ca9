import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet run` in a real terminal (tmux): the prompt source and the table sink as a person sees
/// them, and the terminal restored after Ctrl-C.
final class TerminalTests: XCTestCase {
    private let terminal = Tmux("terminal")

    /// The terminal column at which `text` starts in `line`, counting East Asian wide characters as two.
    private func column(of text: String, in line: String) -> Int? {
        guard let range = line.range(of: text) else { return nil }
        return line[..<range.lowerBound].unicodeScalars.reduce(0) { width, scalar in
            width + ((0x3000...0x9FFF).contains(scalar.value) || (0xFF00...0xFF60).contains(scalar.value) ? 2 : 1)
        }
    }

    override func setUpWithError() throws {
        guard Tmux.isInstalled else { throw XCTSkip("tmux is not installed") }
    }

    override func tearDown() {
        terminal.kill()
        super.tearDown()
    }

    func testPromptAndTableInATerminalAndTheTerminalIsRestoredAfterControlC() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-terminal-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pipeline = directory.appendingPathComponent("search.yaml")
        try """
        source: { prompt: "Search: " }
        ops:
          - filter: len(.) >= 2
          - map: "[{title: ., size: len(.)}, {title: upper(.) + ' 東京', size: len(.) + 3}]"
        sink: { table: { columns: [title, size] } }
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        // The shell prints the exit status and the terminal's mode once rivulet has ended; the quotes
        // keep the markers out of the echoed command line, so only the output matches them.
        let command =
            "\(binary) run \(pipeline.path); echo EX\"\"IT=$?; stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo DO\"\"NE"
        try terminal.start()
        try terminal.type(command, enter: true)
        try terminal.waitFor("Search: ▌")
        try terminal.type("tok")
        var shown = try terminal.waitFor("TOK 東京")
        assertContains(shown, "Search: tok▌", "title")
        // A shorter text replaces the list in place: the old rows are gone, not scrolled up.
        try terminal.press("BSpace", "BSpace")
        shown = try terminal.waitFor("Search: t▌")
        try terminal.type("ky")
        shown = try terminal.waitFor("TKY 東京")
        XCTAssertFalse(shown.contains("TOK 東京"), "the table is redrawn in place:\n\(shown)")
        XCTAssertEqual(shown.components(separatedBy: "title").count - 1, 1, "one table on screen:\n\(shown)")
        // The size column lines up although one title has wide characters.
        let lines = shown.split(separator: "\n").map(String.init)
        let header = try XCTUnwrap(lines.first { $0.hasPrefix("title") })
        let tokyo = try XCTUnwrap(lines.first { $0.contains("TKY 東京") })
        let plain = try XCTUnwrap(lines.first { $0.hasPrefix("tky ") })
        XCTAssertEqual(column(of: "size", in: header), column(of: "6", in: tokyo), shown)
        XCTAssertEqual(column(of: "size", in: header), column(of: "3", in: plain), shown)
        try terminal.press("C-c")
        let after = try terminal.waitFor("DONE")
        assertContains(after, "EXIT=130")
        XCTAssertTrue(after.contains("icanon echo") || after.contains("echo icanon"), "terminal restored:\n\(after)")
        XCTAssertFalse(after.contains("-icanon"), after)
    }

    func testResultsOnStandardOutputStayAboveThePromptAsItIsRedrawn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-prompt-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pipeline = directory.appendingPathComponent("shout.yaml")
        try """
        source: { prompt: "Say: " }
        ops:
          - map: "'heard ' + upper(.)"
        sink: stdout
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        try terminal.start()
        try terminal.type("clear; \(binary) run \(pipeline.path); echo EX\"\"IT=$?", enter: true)
        try terminal.waitFor("Say: ▌")
        try terminal.type("ab")
        let shown = try terminal.waitFor("Say: ab▌")
        let lines = shown.split(separator: "\n").map(String.init)
        // Every result is kept, in order, and the prompt is drawn once, below them.
        let first = try XCTUnwrap(lines.firstIndex(of: "\"heard A\""), shown)
        let second = try XCTUnwrap(lines.firstIndex(of: "\"heard AB\""), shown)
        let prompt = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("Say: ") }, shown)
        XCTAssertLessThan(first, second, shown)
        XCTAssertLessThan(second, prompt, shown)
        XCTAssertEqual(lines.filter { $0.hasPrefix("Say: ") }.count, 1, shown)
        try terminal.press("C-d")
        let after = try terminal.waitFor("EXIT=0")
        assertContains(after, "\"heard AB\"")
    }
}

/// A `table` sink fed windows that late data updates: the updated window replaces its row, on the
/// terminal and in the live view's table, instead of adding a second one.
final class TableUpdateTests: BinaryTestCase {
    private let terminal = Tmux("table-update")

    override func tearDown() {
        terminal.kill()
        super.tearDown()
    }

    private func pipeline(_ sink: String) throws -> String {
        let path = directory.appendingPathComponent("views.yaml").path
        // The first minute of /a is emitted, then updated by a late view (update: true), as
        // aggregate with allowedLateness writes it; mapped, the row is told by `key`.
        try """
        source: { events: [{ at: 0ms, next: { page: /a, time: 10000 } }, { at: 1ms, next: { page: /b, time: 20000 } }, { at: 2ms, next: { page: /a, time: 75000 } }, { at: 3ms, next: { page: /a, time: 30000 } }, { at: 20s, complete: true }] }
        eventTime: { time: .time, maxDelay: 1s }
        ops:
          - aggregate: { by: .page, every: 1m, allowedLateness: 1m, fields: { views: count } }
          - map: "{page: .key, minute: .start, views: .views, late: .update ?? false}"
        sink: \(sink)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testAnUpdatedWindowReplacesItsRowOnTheTerminal() throws {
        guard Tmux.isInstalled else { throw XCTSkip("tmux is not installed") }
        let file = try pipeline("{ table: { columns: [page, minute, views, late], key: [.page, .minute] } }")
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        try terminal.start()
        try terminal.type("\(binary) run \(file) --quiet; echo EX\"\"IT=$?", enter: true)
        let shown = try terminal.waitFor("true")
        // The table's rows only: the command typed may wrap to a line that starts with its path.
        let rows = shown.split(separator: "\n").filter { $0.hasPrefix("/a ") || $0.hasPrefix("/b ") }.map {
            $0.split(separator: " ").map(String.init)
        }
        XCTAssertEqual(rows, [["/a", "0", "2", "true"], ["/b", "0", "1", "false"]], shown)
        try terminal.press("C-c")
        try terminal.waitFor("EXIT=130")
    }

    func testAnUpdatedWindowReplacesItsRowInTheLiveView() throws {
        let port = freeLoopbackPort()
        let file = try pipeline("{ table: { columns: [page, minute, views, late], key: [.page, .minute] } }")
        let process = try startRivulet(["run", file, "--ui", "127.0.0.1:\(port)"], output: .null, error: .null)
        defer {
            process.send(SIGTERM)
            _ = process.communicate(timeout: 30)
        }
        // Waited for whole: the page's own script says `true` before any row is there.
        let updated = #""rows":[["/a","0","2","true"],["/b","0","1","false"]]"#
        var page = ""
        let deadline = Date(timeIntervalSinceNow: 15)
        while Date() < deadline {
            page = LoopbackHTTP.get(port, "/")?.body ?? ""
            if page.contains(updated) { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        assertContains(page, updated)
    }
}
