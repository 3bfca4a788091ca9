import ArgumentParser
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import Tooling

/// `rivulet components [NAME]`: every source, operator and sink, or one in detail.
struct ComponentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "components",
        abstract: "List every source, operator and sink, or describe one: parameters, defaults, docs, an example.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, markdown, json
    }

    @Argument(help: "A component to describe.")
    var name: String?

    @Option(help: "text, markdown (the reference in docs/components.md) or json (a list of components).")
    var format: Format = .text

    @OptionGroup var options: CommonOptions

    func run() throws {
        let registry = try CommandSupport.prepare(options)
        let reference = ComponentReference(registry: registry)
        if let name {
            let specs = registry.specs(named: name)
            guard !specs.isEmpty else {
                let names = registry.all.map(\.name)
                RunLog.error("error: no component '\(name)'\(Suggestions.didYouMean(name, in: names))")
                throw ExitCode(2)
            }
            if format == .json {
                FileHandleOutput.standardOutput.write(ReportFormat.text(.array(specs.map(reference.json))))
                return
            }
            let texts = specs.map { format == .markdown ? reference.markdown($0) : reference.text($0) }
            FileHandleOutput.standardOutput.write(texts.joined(separator: "\n"))
            return
        }
        if format == .json {
            FileHandleOutput.standardOutput.write(ReportFormat.text(.array(registry.all.map(reference.json))))
            return
        }
        FileHandleOutput.standardOutput.write(format == .markdown ? reference.markdownDocument() : reference.textList())
    }
}
