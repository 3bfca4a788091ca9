import Components
import Pipeline

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

    static func registry() -> ComponentRegistry {
        BuiltinComponents.registry()
    }

    /// Prints diagnostics to standard error, with source lines and carets (coloured on a terminal).
    static func report(_ loaded: PipelineLoader.Loaded) {
        let renderer = DiagnosticRenderer(
            useColor: FileHandleOutput.standardError.isTerminal && getenv("NO_COLOR") == nil)
        for diagnostic in loaded.diagnostics {
            FileHandleOutput.standardError.write(renderer.render(diagnostic, source: loaded.source))
        }
    }
}
