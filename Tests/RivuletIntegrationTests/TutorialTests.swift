import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// docs/tutorial.md, run as a reader would, start to end: its `sh` lines in order in one shell
/// (so `cd` and `export` carry on), and each file it says to write (`Write `NAME`:` before a
/// `yaml` block) written where the reader stands. HOME is a scratch folder holding a link to
/// this clone as `~/rivulet`; `make install` is the one line not run (it takes a release build
/// of minutes; testTheInstallScriptPutsAWorkingRivuletOnAPrefix covers it): `~/.local/bin/rivulet`
/// is the debug build instead.
final class TutorialTests: BinaryTestCase {
    /// The script the tutorial amounts to.
    static func script() throws -> String {
        let text = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/tutorial.md"), encoding: .utf8)
        var lines: [String] = ["set -euo pipefail"]
        var block: String?
        var writing: String?
        var pendingFile: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let kind = block {
                if line == "```" {
                    if writing != nil { lines.append("RIVULET_TUTORIAL_EOF") }
                    block = nil
                    writing = nil
                    continue
                }
                if kind == "sh" {
                    let command = line.trimmingCharacters(in: .whitespaces)
                    if command.isEmpty { continue }
                    // The release build and install: covered by the install script's own test.
                    let install = command.hasPrefix("cd \"$RIVULET\" && make install")
                    lines.append(install ? "cd \"$RIVULET\"" : "echo '$ ' \(Self.quoted(command)) >&2; " + command)
                } else if writing != nil {
                    lines.append(line)
                }
                continue
            }
            if line.hasPrefix("```") {
                block = String(line.dropFirst(3))
                if block == "yaml", let file = pendingFile {
                    writing = file
                    lines.append("cat > \(file) <<'RIVULET_TUTORIAL_EOF'")
                }
                pendingFile = nil
                continue
            }
            if let range = line.range(of: #"Write `[^`]+`:$"#, options: .regularExpression) {
                pendingFile = String(line[range].dropFirst(7).dropLast(2))
            } else if !line.isEmpty {
                pendingFile = nil
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    func testTheTutorialRunsAsWrittenStartToEnd() throws {
        let plugin = Repository.root.appendingPathComponent(
            "Examples/TextPlugin/.build/debug/libTextPlugin.so"
        ).path
        try XCTSkipUnless(FileManager.default.fileExists(atPath: plugin), "make test builds the plugin example first")
        let home = directory.appendingPathComponent("home")
        let bin = home.appendingPathComponent(".local/bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: home.appendingPathComponent("rivulet"), withDestinationURL: Repository.root)
        try FileManager.default.createSymbolicLink(
            at: bin.appendingPathComponent("rivulet"),
            withDestinationURL: productsDirectory().appendingPathComponent("rivulet"))
        let script = try Self.script()
        assertContains(script, "cat > log-digest.yaml <<", "cat > log-digest.test.yaml <<")
        let file = directory.appendingPathComponent("tutorial.sh")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let shell = try ChildProcess(
            executable: "/usr/bin/env",
            arguments: [
                "HOME=\(home.path)", "PATH=\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")", "bash",
                file.path,
            ], input: .null)
        let result = shell.communicate(timeout: 600)
        let stdout = String(decoding: result.standardOutput, as: UTF8.self)
        let stderr = String(decoding: result.standardError, as: UTF8.self)
        XCTAssertEqual(result.termination, .exited(0), "\(stderr.suffix(3000))\n\(script)")
        let tour = home.appendingPathComponent("rivulet-tour")
        let errors = try String(contentsOf: tour.appendingPathComponent("errors.jsonl"), encoding: .utf8)
        XCTAssertEqual(errors.split(separator: "\n").count, 3, errors)
        assertContains(stdout, "1 passed, 0 failed", "{\"id\":1,\"customer\":\"Ada Lovelace\"")
        XCTAssertTrue(stdout.contains("flowchart"), "the graph was drawn: \(stdout.prefix(500))")
    }
}
