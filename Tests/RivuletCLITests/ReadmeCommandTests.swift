@_spi(Host) import Components
import Foundation
import XCTest

/// Every `rivulet` command of the README, run exactly as written (a shell line, comment and all)
/// in a copy of the repository's pipelines and examples, must succeed. The README's build lines
/// (`make run`, `make test`, `swift build`, `Benchmarks/run.sh`) build the project itself: CI runs
/// `make test`, which builds the plugin too, and the benchmarks take release builds of minutes.
final class ReadmeCommandTests: BinaryTestCase {
    static let buildLines = ["make ", "swift build ", "Benchmarks/run.sh "]

    /// The lines of the README's `sh` blocks.
    static func commands() throws -> [String] {
        let readme = try String(
            contentsOf: DescribeCommandTests.repository.appendingPathComponent("README.md"), encoding: .utf8)
        var lines: [String] = []
        var inBlock = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock = !inBlock && line == "```sh"
                continue
            }
            if inBlock && !line.trimmingCharacters(in: .whitespaces).isEmpty { lines.append(String(line)) }
        }
        return lines
    }

    /// A copy of Pipelines/ and Examples/ (without build folders) beside links to the builds.
    private func copyOfTheRepository() throws {
        let repository = DescribeCommandTests.repository
        let copy = try ChildProcess(
            executable: "/bin/sh",
            arguments: [
                "-c",
                "cd '\(repository.path)' && tar cf - --exclude=.build Pipelines Examples | tar xf - -C '\(directory.path)'"
                    + " && ln -s '\(repository.path)/.build' '\(directory.path)/.build'"
                    + " && ln -s '\(repository.path)/Examples/TextPlugin/.build' '\(directory.path)/Examples/TextPlugin/.build'",
            ])
        XCTAssertEqual(copy.communicate(timeout: 60).termination, .exited(0))
    }

    func testEveryRivuletCommandOfTheReadmeWorksAsWritten() throws {
        try copyOfTheRepository()
        let commands = try Self.commands().filter { line in !Self.buildLines.contains { line.hasPrefix($0) } }
        XCTAssertGreaterThanOrEqual(commands.count, 20, "the README's commands were found")
        for command in commands {
            XCTAssertTrue(command.hasPrefix(".build/debug/rivulet "), "a command the test does not know: \(command)")
            let shell = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", "cd '\(directory.path)' && \(command)"], input: .null)
            let result = shell.communicate(timeout: 60)
            XCTAssertEqual(
                result.termination, .exited(0),
                "\(command)\n" + String(decoding: result.standardError, as: UTF8.self).suffix(600))
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("orders.test.yaml").path))
        let completions = try String(contentsOf: directory.appendingPathComponent("rivulet.bash"), encoding: .utf8)
        XCTAssertTrue(completions.hasPrefix("#!/bin/bash"))
    }
}
