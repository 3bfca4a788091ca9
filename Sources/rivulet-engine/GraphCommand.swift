import ArgumentParser
@_spi(Host) import Pipeline
@_spi(Host) import Tooling

/// `rivulet graph FILE`: the pipeline's streams, operators and sinks as text, DOT or Mermaid.
struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Draw a pipeline's graph as text, Graphviz DOT, Mermaid or SVG.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, dot, mermaid, svg
    }

    @Argument(help: "The pipeline file.")
    var file: String

    @Option(help: "text, dot, mermaid or svg (drawn left to right, nothing outside the file).")
    var format: Format = .text

    @OptionGroup var options: CommonOptions

    func run() throws {
        let loaded = CommandSupport.loader(try CommandSupport.prepare(options)).load(path: file)
        guard let pipeline = loaded.pipeline else {
            CommandSupport.report(loaded)
            throw ExitCode(2)
        }
        let graph = PipelineGraph(pipeline)
        let output: String
        switch format {
        case .text: output = graph.text()
        case .dot: output = graph.dot()
        case .mermaid: output = graph.mermaid()
        case .svg:
            output = graph.svg(
                title: pipeline.spec.name
                    ?? String(file.split(separator: "/").last ?? "").replacingOccurrences(of: ".yaml", with: ""))
        }
        FileHandleOutput.standardOutput.write(output)
    }
}
