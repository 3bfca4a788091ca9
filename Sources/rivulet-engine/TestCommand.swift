import ArgumentParser
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import Tooling

/// `rivulet test [PATH...]`: runs `*.test.yaml` files on a virtual clock.
struct TestCommand: ParsableCommand, HandlesStopSignals {
    /// Only `--watch` stops on a signal itself; a plain test run just ends.
    var handlesStopSignals: Bool { watch }

    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract:
            "Run pipeline tests (*.test.yaml) on a virtual clock; end with 'N passed, M failed', exit 1 on a failure.")

    @Argument(help: "Test files, or directories searched for *.test.yaml (default: the current directory).")
    var paths: [String] = []

    @Option(help: "Run only the cases whose name contains this text.")
    var filter: String?

    @Flag(
        help:
            "Rewrite the 'expect' list of each failed case from what the pipeline produced (times included), after showing the diff."
    )
    var update = false

    @Option(help: "text (the default), json or junit (JUnit XML, for CI).")
    var format: ReportFormat = .text

    @Flag(
        help:
            "Run the tests again whenever a test file or a file beside it (its pipeline, fixtures) changes, or on SIGHUP; SIGINT ends."
    )
    var watch = false

    @OptionGroup var options: CommonOptions

    func run() throws {
        if watch { SignalWatcher.blockHangUp() }
        let registry = try CommandSupport.prepare(options)
        guard watch else {
            let tested = Result { try runTests(registry) }
            try LeakCheck.verify()
            return try tested.get()
        }
        let again = DispatchSemaphore(value: 0)
        SignalWatcher.start(hangUp: { again.signal() }, { again.signal() })
        let roots = paths.isEmpty ? ["."] : paths
        let watcher = FileWatcher(paths: { Self.watchedFiles(roots) }, changed: { again.signal() })
        while true {
            do { try runTests(registry) } catch is ExitCode {}  // failures are shown; the watch goes on
            RunLog.info("watch: waiting for a change")
            again.wait()
            // Several changes at once (an editor's save) run the tests once.
            while again.wait(timeout: .now() + .milliseconds(100)) == .success {}
            if let signal = SignalWatcher.received { throw ExitCode(128 + signal) }
            _ = watcher
        }
    }

    /// What `test --watch` watches: the test files and the files beside them (pipelines, fixtures).
    static func watchedFiles(_ roots: [String]) -> [String] {
        let tests = testFiles(roots)
        var files = Set(tests)
        for folder in Set(tests.map { LocalFiles.directory(of: $0) }) {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let path = folder + "/" + name
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                    files.insert(path)
                }
            }
        }
        return files.sorted()
    }

    private func runTests(_ registry: ComponentRegistry) throws {
        let files = Self.testFiles(paths.isEmpty ? ["."] : paths)
        guard !files.isEmpty else {
            RunLog.error("error: no *.test.yaml file in \(paths.joined(separator: ", "))")
            throw ExitCode(2)
        }
        let runner = PipelineTestRunner(
            registry: registry, environment: CommandSupport.environment,
            loadPlugin: { PluginLoading.load($0, into: $1) })
        var counts = Counts()
        var invalid = 0
        var results: [PipelineTestRunner.FileResult] = []
        for file in files {
            let result = runner.run(testFile: file, filter: filter)
            results.append(result)
            RunLog.report(result.diagnostics, source: result.diagnosticSource)
            if result.diagnostics.contains(where: { $0.severity == .error }) {
                invalid += 1
                continue
            }
            try show(result, of: file, counts: &counts)
        }
        let (passed, failed, updated) = (counts.passed, counts.failed, counts.updated)
        switch format {
        case .text:
            FileHandleOutput.standardOutput.write(
                "\(passed) passed, \(failed) failed" + (update ? ", \(updated) updated" : "")
                    + (invalid > 0 ? ", \(invalid) file\(invalid == 1 ? "" : "s") not run (errors above)" : "") + "\n")
        case .json: FileHandleOutput.standardOutput.write(Self.json(results, passed: passed, failed: failed))
        case .junit: FileHandleOutput.standardOutput.write(Self.junit(results))
        }
        if invalid > 0 { throw ExitCode(2) }
        if failed > 0 { throw ExitCode(1) }
    }

    /// The cases passed, failed and updated so far.
    private struct Counts {
        var passed = 0
        var failed = 0
        var updated = 0
    }

    /// Shows one file's cases (and, with --update, rewrites the expectations of those that failed).
    private func show(_ result: PipelineTestRunner.FileResult, of file: String, counts: inout Counts) throws {
        var replacements: [(node: YAMLNode, events: [PipelineTestFile.TimedEvent])] = []
        for testCase in result.cases {
            if testCase.passed {
                counts.passed += 1
                if format == .text { FileHandleOutput.standardOutput.write("ok    \(file): \(testCase.name)\n") }
                continue
            }
            let indented = testCase.report.split(separator: "\n", omittingEmptySubsequences: false).map {
                "      \($0)"
            }
            if update, let node = testCase.testCase?.expectNode, testCase.testCase?.expect != nil {
                replacements.append((node, testCase.actual))
                counts.updated += 1
                FileHandleOutput.standardOutput.write("UPDATE \(file): \(testCase.name)\n")
            } else {
                counts.failed += 1
                if format == .text { FileHandleOutput.standardOutput.write("FAIL  \(file): \(testCase.name)\n") }
            }
            if format == .text || update {
                FileHandleOutput.standardOutput.write(indented.joined(separator: "\n") + "\n")
            }
        }
        if !replacements.isEmpty, let text = LocalFiles.readText(file) {
            do {
                try ExpectationUpdate.apply(replacements, to: text).write(
                    toFile: file, atomically: true, encoding: .utf8)
            } catch {
                RunLog.error("error: cannot write \(file): \(error)")
                throw ExitCode(2)
            }
        }
    }

    /// Every file's cases and problems, and the counts, as one JSON object.
    static func json(_ results: [PipelineTestRunner.FileResult], passed: Int, failed: Int) -> String {
        var files: [Value] = []
        for result in results {
            var file = JSONObject()
            file["path"] = .string(result.path)
            file["diagnostics"] = .array(result.diagnostics.map(ReportFormat.json))
            file["cases"] = .array(
                result.cases.map { testCase in
                    var object = JSONObject()
                    object["name"] = .string(testCase.name)
                    object["passed"] = .bool(testCase.passed)
                    if !testCase.passed { object["report"] = .string(testCase.report) }
                    return .object(object)
                })
            files.append(.object(file))
        }
        var document = JSONObject()
        document["files"] = .array(files)
        document["passed"] = .int(passed)
        document["failed"] = .int(failed)
        return ReportFormat.text(.object(document))
    }

    /// Every file as a JUnit test suite; an invalid file is one case with an error.
    static func junit(_ results: [PipelineTestRunner.FileResult]) -> String {
        ReportFormat.junit(
            results.map { result in
                let errors = result.diagnostics.filter { $0.severity == .error }
                if !errors.isEmpty {
                    return (result.path, [(result.path, nil, errors.map(\.description).joined(separator: "\n"))])
                }
                return (result.path, result.cases.map { ($0.name, $0.passed ? nil : $0.report, nil) })
            })
    }

    /// The test files named, and those found in the directories named, sorted. A path that does
    /// not exist is kept as a file: reading it then fails as `run` and `lint` say it does
    /// (`FILE:1:1: error: cannot read the file: ...`, exit 2).
    static func testFiles(_ paths: [String]) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) || !isDirectory.boolValue {
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
