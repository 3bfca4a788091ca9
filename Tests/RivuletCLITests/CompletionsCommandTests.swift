import BinaryTestSupport
import XCTest

/// `rivulet completions`: a script for each shell that names the subcommands.
final class CompletionsCommandTests: XCTestCase {
    func testEachShellGetsAScriptThatKnowsTheSubcommands() throws {
        for (shell, start) in [("bash", "#!/bin/bash"), ("zsh", "#compdef rivulet"), ("fish", "")] {
            let result = try runRivulet(["completions", shell])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.hasPrefix(start), "\(shell): \(result.stdout.prefix(80))")
            for command in ["run", "lint", "test", "components", "init"] {
                XCTAssertTrue(result.stdout.contains(command), "\(shell) completes \(command)")
            }
        }
        let bad = try runRivulet(["completions", "powershell"])
        XCTAssertEqual(bad.status, 2)
    }
}
