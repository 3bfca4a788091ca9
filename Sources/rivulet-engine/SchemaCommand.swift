import ArgumentParser
@_spi(Host) import Pipeline
@_spi(Host) import Tooling

/// `rivulet schema`: the JSON Schema of pipeline files (or, with `--tests`, of test files), for
/// editors.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Write the JSON Schema of pipeline files (or of test files) for editors.",
        discussion: """
            rivulet schema > rivulet.schema.json, then put on a pipeline's first line
            # yaml-language-server: $schema=rivulet.schema.json
            and an editor with the YAML language server completes components and parameters and
            underlines mistakes. Components of plugins given with --plugin are included.
            """)

    @Flag(help: "The schema of test files (*.test.yaml) instead.")
    var tests = false

    @OptionGroup var options: CommonOptions

    func run() throws {
        let registry = try CommandSupport.prepare(options)
        let schema = PipelineSchema(registry: registry)
        FileHandleOutput.standardOutput.write(ReportFormat.text(tests ? schema.testFile() : schema.pipelineFile()))
    }
}
