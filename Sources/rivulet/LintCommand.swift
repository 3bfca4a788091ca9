import ArgumentParser
@_spi(Host) import Pipeline

/// `rivulet lint FILE...`: checks pipeline files and reports every error, located.
struct LintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Check pipeline files; print every error as file:line:col and exit 2 if there is one.")

    @Argument(help: "The pipeline files to check.")
    var files: [String]

    @Flag(help: "Also check that the pipelines can keep checkpoints, as `run --state` requires.")
    var state = false

    @OptionGroup var pluginOptions: PluginOptions

    func run() throws {
        let loader = CommandSupport.loader(try CommandSupport.registry(plugins: pluginOptions.plugins))
        var errorCount = 0
        var failedFiles = 0
        for file in files {
            let loaded = state ? loader.load(path: file).checkingCheckpoints() : loader.load(path: file)
            CommandSupport.report(loaded)
            let errors = loaded.diagnostics.filter { $0.severity == .error }.count
            if errors == 0 {
                FileHandleOutput.standardOutput.write("\(file): ok\n")
            } else {
                errorCount += errors
                failedFiles += 1
            }
        }
        if errorCount > 0 {
            FileHandleOutput.standardError.write(
                "\(errorCount) error\(errorCount == 1 ? "" : "s") in \(failedFiles) file\(failedFiles == 1 ? "" : "s")\n"
            )
            throw ExitCode(2)
        }
    }
}
