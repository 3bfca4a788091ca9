import ArgumentParser
import Foundation
@_spi(Host) import Pipeline
@_spi(Host) import Tooling

/// `rivulet test [PATH...]`: runs `*.test.yaml` files on a virtual clock.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract:
            "Run pipeline tests (*.test.yaml) on a virtual clock; end with 'N passed, M failed', exit 1 on a failure.")

    @Argument(help: "Test files, or directories searched for *.test.yaml (default: the current directory).")
    var paths: [String] = []

    @OptionGroup var pluginOptions: PluginOptions

    func run() throws {
        let files = try Self.testFiles(paths.isEmpty ? ["."] : paths)
        guard !files.isEmpty else {
            FileHandleOutput.standardError.write("error: no *.test.yaml file in \(paths.joined(separator: ", "))\n")
            throw ExitCode(2)
        }
        let registry = try CommandSupport.registry(plugins: pluginOptions.plugins)
        let runner = PipelineTestRunner(
            registry: registry, environment: CommandSupport.environment,
            loadPlugin: { PluginLoading.load($0, into: $1) })
        var passed = 0
        var failed = 0
        var invalid = false
        let renderer = DiagnosticRenderer(
            useColor: FileHandleOutput.standardError.isTerminal && getenv("NO_COLOR") == nil)
        for file in files {
            let result = runner.run(testFile: file)
            FileHandleOutput.standardError.write(renderer.render(result.diagnostics, source: result.diagnosticSource))
            if result.diagnostics.contains(where: { $0.severity == .error }) {
                invalid = true
                continue
            }
            for testCase in result.cases {
                if testCase.passed {
                    passed += 1
                    FileHandleOutput.standardOutput.write("ok    \(file): \(testCase.name)\n")
                } else {
                    failed += 1
                    FileHandleOutput.standardOutput.write("FAIL  \(file): \(testCase.name)\n")
                    let indented = testCase.report.split(separator: "\n", omittingEmptySubsequences: false).map {
                        "      \($0)"
                    }
                    FileHandleOutput.standardOutput.write(indented.joined(separator: "\n") + "\n")
                }
            }
        }
        FileHandleOutput.standardOutput.write("\(passed) passed, \(failed) failed\n")
        if invalid { throw ExitCode(2) }
        if failed > 0 { throw ExitCode(1) }
    }

    /// The test files named, and those found in the directories named, sorted.
    static func testFiles(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ValidationError("no such file or directory: \(path)")
            }
            if !isDirectory.boolValue {
                files.append(path)
                continue
            }
            let enumerator = FileManager.default.enumerator(atPath: path)
            while let entry = enumerator?.nextObject() as? String {
                if entry.hasSuffix(".test.yaml") && !entry.contains(".build") {
                    files.append(path == "." ? entry : (path.hasSuffix("/") ? path + entry : path + "/" + entry))
                }
            }
        }
        return files.sorted()
    }
}
