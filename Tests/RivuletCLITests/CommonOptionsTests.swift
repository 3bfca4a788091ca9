import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// What every pipeline-reading command shares: `--env-file`, `--color` and `NO_COLOR`, and
/// `${VAR:?message}` through them.
final class CommonOptionsTests: BinaryTestCase {
    private func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testAnEnvironmentFileFillsVariablesTheEnvironmentDoesNotSet() throws {
        let pipeline = try file(
            "p.yaml",
            "source: { events: [{ at: 0ms, next: \"${GREETING:?set GREETING} ${NAME} ${QUOTED}\" }, { at: 0ms, complete: true }] }\nsink: stdout\n"
        )
        let env = try file(
            "vars.env", "# comment\n\nexport GREETING=hello\nNAME = file\nQUOTED=\"two\\nlines\"\n")
        let result = try runRivulet(
            ["run", pipeline, "--clock", "virtual", "--env-file", env], environment: ["NAME": "shell"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "\"hello shell two\\nlines\"\n", "the environment wins over the file")

        let missing = try runRivulet(["lint", pipeline])
        XCTAssertEqual(missing.status, 2)
        assertContains(missing.stderr, "p.yaml:1:38: error: set GREETING")
        let malformed = try runRivulet(["lint", pipeline, "--env-file", try file("bad.env", "OK=1\n2BAD=x\n")])
        XCTAssertEqual(malformed.status, 2)
        XCTAssertTrue(
            malformed.stderr.hasSuffix("bad.env:2:1: error: expected NAME=VALUE, got '2BAD=x'\n"), malformed.stderr)
        let absent = try runRivulet(["lint", pipeline, "--env-file", "/nonexistent.env"])
        XCTAssertEqual(absent.status, 2)
        XCTAssertEqual(absent.stderr, "error: cannot read the environment file '/nonexistent.env'\n")
    }

    func testColourIsChosenByColorAndANonEmptyNoColor() throws {
        let pipeline = try file("p.yaml", "source: { fixtur: x }\nsink: stdout\n")
        let escape = "\u{1B}["
        XCTAssertFalse(try runRivulet(["lint", pipeline]).stderr.contains(escape), "piped: no colour")
        XCTAssertTrue(try runRivulet(["lint", pipeline, "--color", "always"]).stderr.contains(escape))
        XCTAssertFalse(
            try runRivulet(["lint", pipeline, "--color", "never"], environment: ["TERM": "xterm"]).stderr.contains(
                escape))
        XCTAssertEqual(try runRivulet(["lint", pipeline, "--color", "sometimes"]).status, 2)
    }
}
