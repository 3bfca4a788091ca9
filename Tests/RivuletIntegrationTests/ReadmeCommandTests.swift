import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// Every `rivulet` command of the README, run exactly as written (a shell line, comment and all)
/// in a copy of the repository's pipelines and examples, must succeed, and so must the build of the
/// example plugin. The lines that build this package itself (`make run`, `make test`,
/// `Benchmarks/run.sh`) cannot run inside its own test run, which holds the build folder: CI runs
/// `make test`, and the benchmarks take release builds of minutes.
final class ReadmeCommandTests: BinaryTestCase {
    static let buildLines = ["make ", "Benchmarks/run.sh "]

    /// The lines of the README's `sh` blocks.
    static func commands() throws -> [String] {
        let readme = try String(
            contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
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
        let repository = Repository.root
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
            XCTAssertTrue(
                command.hasPrefix(".build/debug/rivulet ") || command.hasPrefix("swift build --package-path Examples/"),
                "a command the test does not know: \(command)")
            // The plugin is built where the README builds it, in the repository (a no-op once
            // make test has built it); everything else runs in the copy.
            let folder = command.hasPrefix("swift build") ? Repository.root.path : directory.path
            let shell = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", "cd '\(folder)' && \(command)"], input: .null)
            let result = shell.communicate(timeout: command.hasPrefix("swift build") ? 600 : 60)
            XCTAssertEqual(
                result.termination, .exited(0),
                "\(command)\n" + String(decoding: result.standardError, as: UTF8.self).suffix(600))
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("orders.test.yaml").path))
        let completions = try String(contentsOf: directory.appendingPathComponent("rivulet.bash"), encoding: .utf8)
        XCTAssertTrue(completions.hasPrefix("#!/bin/bash"))
    }

    func testTheInstallScriptPutsAWorkingRivuletOnAPrefix() throws {
        let script = Repository.root.appendingPathComponent("scripts/install.sh").path
        let prefix = directory.appendingPathComponent("prefix").path
        let install = try ChildProcess(
            executable: script, arguments: [productsDirectory().path, prefix])
        let result = install.communicate(timeout: 60)
        XCTAssertEqual(result.termination, .exited(0), String(decoding: result.standardError, as: UTF8.self))
        XCTAssertTrue(
            String(decoding: result.standardOutput, as: UTF8.self).contains("add it to your PATH"),
            "the prefix is not on the PATH of the test")
        let installed = try ChildProcess(executable: prefix + "/bin/rivulet", arguments: ["--version"])
        let version = installed.communicate(timeout: 30)
        XCTAssertEqual(version.termination, .exited(0), "the linked binary finds its library")
        XCTAssertTrue(String(decoding: version.standardOutput, as: UTF8.self).hasPrefix("0.1.0 (commit "))
        let missing = try ChildProcess(executable: script, arguments: [directory.path, prefix]).communicate(timeout: 30)
        XCTAssertEqual(missing.termination, .exited(2), "nothing built there")
    }
}
