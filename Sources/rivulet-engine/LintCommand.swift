import ArgumentParser
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import Tooling

/// `rivulet lint PATH...`: checks pipeline files and test files and reports every error, located.
struct LintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Check pipeline and test files; print every error as file:line:col and exit 2 if there is one.",
        discussion: """
            A file with 'pipeline:' and 'tests:' is a test file: its pipeline, each test's inputs \
            and the stream it checks are checked, nothing runs. A folder is searched for pipeline \
            and test files (*.yaml, *.yml; other YAML files in it, such as fixtures, are left alone).
            """)

    @Argument(help: "Pipeline files, test files, or folders to search for them.")
    var paths: [String]

    @Flag(help: "Also check that the pipelines can keep checkpoints, as `run --state` requires.")
    var state = false

    @Option(help: "text (the default), json or junit (JUnit XML, for CI); json and junit go to standard output.")
    var format: ReportFormat = .text

    @Option(
        name: .customLong("set"),
        help: "Override a value of each pipeline file by its path, as `run --set` does: ops.1.debounce=300ms.",
        transform: { text in
            guard let override = Override(text) else { throw ValidationError("--set expects key=value, got '\(text)'") }
            return override
        })
    var overrides: [Override] = []

    @OptionGroup var options: CommonOptions

    func run() throws {
        let registry = try CommandSupport.prepare(options)
        let loader = CommandSupport.loader(registry)
        let tests = PipelineTestRunner(
            registry: registry, environment: CommandSupport.environment,
            loadPlugin: { PluginLoading.load($0, into: $1) })
        var errorCount = 0
        var failedFiles = 0
        let files = Self.files(paths)
        guard !files.isEmpty else {
            RunLog.error("error: no pipeline or test file in \(paths.joined(separator: ", "))")
            throw ExitCode(2)
        }
        var checked: [(file: String, diagnostics: [Diagnostic])] = []
        for (file, kind) in files {
            let diagnostics: [Diagnostic]
            if kind == .test {
                diagnostics = tests.check(testFile: file).diagnostics
                if format == .text { Self.report(diagnostics) }
            } else {
                // What `run --set` would run: the file with the same values overridden.
                let read = loader.load(path: file, overrides: overrides)
                let loaded = state ? read.checkingCheckpoints() : read.checkingAcknowledgements()
                if format == .text { CommandSupport.report(loaded) }
                diagnostics = loaded.diagnostics
            }
            checked.append((file, diagnostics))
            let errors = diagnostics.filter { $0.severity == .error }.count
            if errors == 0 {
                if format == .text { FileHandleOutput.standardOutput.write("\(file): ok\n") }
            } else {
                errorCount += errors
                failedFiles += 1
            }
        }
        if format != .text {
            FileHandleOutput.standardOutput.write(Self.document(checked, errors: errorCount, format: format))
            if errorCount > 0 { throw ExitCode(2) }
        }
        if errorCount > 0 {
            RunLog.error(
                "\(errorCount) error\(errorCount == 1 ? "" : "s") in \(failedFiles) file\(failedFiles == 1 ? "" : "s")")
            throw ExitCode(2)
        }
    }

    /// The report of `--format json` or `junit`: every file checked, with its diagnostics.
    private static func document(
        _ checked: [(file: String, diagnostics: [Diagnostic])], errors errorCount: Int, format: ReportFormat
    ) -> String {
        guard format == .json else {
            return ReportFormat.junit([
                (
                    "rivulet lint",
                    checked.map { file, diagnostics in
                        let errors = diagnostics.filter { $0.severity == .error }
                        return (file, errors.isEmpty ? nil : errors.map(\.description).joined(separator: "\n"), nil)
                    }
                )
            ])
        }
        var document = JSONObject()
        document["files"] = .array(
            checked.map { file, diagnostics in
                var object = JSONObject()
                object["path"] = .string(file)
                object["ok"] = .bool(!diagnostics.contains { $0.severity == .error })
                object["diagnostics"] = .array(diagnostics.map(ReportFormat.json))
                return .object(object)
            })
        document["errors"] = .int(errorCount)
        return ReportFormat.text(.object(document))
    }

    /// Diagnostics that may be in several files (a test file and its pipeline), each shown with
    /// its own file's line.
    private static func report(_ diagnostics: [Diagnostic]) {
        var texts: [String: String] = [:]
        for diagnostic in diagnostics {
            let file = diagnostic.location.file
            if texts[file] == nil { texts[file] = LocalFiles.readText(file) ?? "" }
            RunLog.report([diagnostic], source: texts[file])
        }
    }

    enum Kind { case pipeline, test, other }

    /// What the YAML file at `path` is, by its top-level keys; a file that cannot be read or
    /// parsed counts as a pipeline, whose check then says what is wrong with it.
    static func kind(of path: String) -> Kind {
        guard case .success(let text) = PipelineLoader.readPipelineFile(path) else { return .pipeline }
        guard let root = try? YAMLLoader(file: path, environment: [:]).load(text) else { return .pipeline }
        guard let pairs = root.pairs else { return .other }
        let keys = Set(pairs.compactMap(\.key.scalar))
        if keys.contains("pipeline") && keys.contains("tests") { return .test }
        if !keys.isDisjoint(with: ["source", "streams", "sink", "sinks"]) { return .pipeline }
        return .other
    }

    /// The files named (each checked, whatever it holds), and the pipeline and test files found
    /// in the folders named, sorted.
    static func files(_ paths: [String]) -> [(path: String, kind: Kind)] {
        var files: [(path: String, kind: Kind)] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            // A file that is not there is named as it is: checking it says so, located.
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                files.append((path, kind(of: path)))
                continue
            }
            var found: [(path: String, kind: Kind)] = []
            let enumerator = FileManager.default.enumerator(atPath: path)
            while let entry = enumerator?.nextObject() as? String {
                let name = (entry as NSString).lastPathComponent
                if name.hasPrefix(".") {
                    enumerator?.skipDescendants()
                    continue
                }
                guard name.hasSuffix(".yaml") || name.hasSuffix(".yml") else { continue }
                let full = path.hasSuffix("/") ? path + entry : path + "/" + entry
                let fileKind = kind(of: full)
                if fileKind != .other { found.append((full, fileKind)) }
            }
            files += found.sorted { $0.path < $1.path }
        }
        return files
    }
}
