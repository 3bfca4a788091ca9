import ArgumentParser
import Components
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

    /// The colour choice of this command (`--color`).
    nonisolated(unsafe) static var color = ColorChoice.auto

    /// Whether diagnostics on standard error are coloured: `--color`, else on a terminal unless
    /// `NO_COLOR` is set to something (an empty `NO_COLOR` counts as unset, as the NO_COLOR convention says).
    static var useColor: Bool {
        switch color {
        case .always: return true
        case .never: return false
        case .auto:
            let noColor = getenv("NO_COLOR").map { String(cString: $0) } ?? ""
            return FileHandleOutput.standardError.isTerminal && noColor.isEmpty
        }
    }

    /// Applies the common options (the environment files, the colour choice) and returns the
    /// registry with the plugins loaded; a problem ends the command with exit 2.
    static func prepare(_ options: CommonOptions) throws -> ComponentRegistry {
        try options.log.apply()
        color = options.color
        for file in options.envFiles {
            do {
                for (name, value) in try EnvironmentFile.read(file) { setenv(name, value, 0) }
            } catch {
                RunLog.error("\(error)")
                throw ExitCode(2)
            }
        }
        return try registry(plugins: options.plugins)
    }

    /// The built-in components plus the plugins given with `--plugin`; a plugin that cannot be
    /// loaded ends the command with exit 2.
    static func registry(plugins: [String] = []) throws -> ComponentRegistry {
        let registry = ComponentRegistry(registering: BuiltinComponents.all)
        for plugin in plugins {
            if let problem = PluginLoading.load(plugin, into: registry) {
                RunLog.error("error: \(problem)")
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
        // A --set value's own errors have no line of the file to show.
        let (fromSet, fromFile) = (
            loaded.diagnostics.filter { $0.location.file == "--set" },
            loaded.diagnostics.filter { $0.location.file != "--set" }
        )
        RunLog.report(fromSet, source: nil)
        RunLog.report(fromFile, source: loaded.source)
    }
}

/// The options of every command that reads pipelines: `--plugin`, `--env-file`, `--color`,
/// `--log-level` and `--log-format`.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("plugin"), help: "Load a Swift operator plugin (a .so built against this rivulet).")
    var plugins: [String] = []

    @Option(
        name: .customLong("env-file"),
        help: "Read NAME=VALUE lines into the environment (variables already set keep their values).")
    var envFiles: [String] = []

    @Option(help: "Colour diagnostics: auto (on a terminal, unless NO_COLOR is set and not empty), always or never.")
    var color: ColorChoice = .auto

    @OptionGroup var log: LogOptions
}

/// When diagnostics are coloured.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never
}
