import ArgumentParser
@_spi(Host) import Components
@_spi(Host) import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

/// What every subcommand needs: the registry and a way to load and report pipeline files.
enum CommandSupport {
    /// The environment `${VAR}` reads.
    static var environment: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// The built-in components plus the plugins given with `--plugin`; a plugin that cannot be
    /// loaded ends the command with exit 2.
    static func registry(plugins: [String] = []) throws -> ComponentRegistry {
        let registry = BuiltinComponents.registry()
        for plugin in plugins {
            if let problem = PluginLoading.load(plugin, into: registry) {
                FileHandleOutput.standardError.write("error: \(problem)\n")
                throw ExitCode(2)
            }
        }
        return registry
    }

    /// A pipeline loader over `registry` that loads the plugins files name.
    static func loader(_ registry: ComponentRegistry) -> PipelineLoader {
        PipelineLoader(
            registry: registry, environment: environment, loadPlugin: { PluginLoading.load($0, into: registry) })
    }

    /// Prints diagnostics to standard error, with source lines and carets (coloured on a terminal).
    static func report(_ loaded: PipelineLoader.Loaded) {
        let renderer = DiagnosticRenderer(
            useColor: FileHandleOutput.standardError.isTerminal && getenv("NO_COLOR") == nil)
        // A --set value's own errors have no line of the file to show.
        let (fromSet, fromFile) = (
            loaded.diagnostics.filter { $0.location.file == "--set" },
            loaded.diagnostics.filter { $0.location.file != "--set" }
        )
        FileHandleOutput.standardError.write(renderer.render(fromSet, source: nil))
        FileHandleOutput.standardError.write(renderer.render(fromFile, source: loaded.source))
    }
}

/// `--plugin PATH`, for every command that reads pipelines.
struct PluginOptions: ParsableArguments {
    @Option(name: .customLong("plugin"), help: "Load a Swift operator plugin (a .so built against this rivulet).")
    var plugins: [String] = []
}
