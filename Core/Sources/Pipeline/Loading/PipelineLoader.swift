#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a pipeline file from disk and checks it: YAML, structure, components, graph.
@_spi(Host) public struct PipelineLoader {
    /// The components pipelines may name.
    public let registry: ComponentRegistry
    /// The variables `${VAR}` reads.
    public let environment: [String: String]
    /// Loads a plugin named in a file (its resolved path) into the registry; returns the problem.
    public let loadPlugin: ((String) -> String?)?

    /// A loader over `registry`, substituting `${VAR}` from `environment`; plugins named in a file
    /// are loaded with `loadPlugin` before the file is checked.
    public init(registry: ComponentRegistry, environment: [String: String], loadPlugin: ((String) -> String?)? = nil) {
        self.registry = registry
        self.environment = environment
        self.loadPlugin = loadPlugin
    }

    /// The outcome of loading one file.
    public struct Loaded {
        /// The file's text (for printing source lines under diagnostics), if it could be read.
        public let source: String?
        /// The checked pipeline, when there were no errors.
        public let pipeline: ValidatedPipeline?
        /// Every diagnostic, in file order.
        public let diagnostics: [Diagnostic]
        /// The directory relative paths in the file are resolved against.
        public let baseDirectory: String
    }

    /// Loads and checks the file at `path`, after applying `overrides`.
    public func load(path: String, overrides: [Override] = []) -> Loaded {
        switch Self.readPipelineFile(path) {
        case .success(let text): return load(text: text, path: path, overrides: overrides)
        case .failure(let problem):
            // A NUL byte or a bad byte has a place: show its line (the bytes decoded as far as they go).
            let located = problem.location.line > 1 || problem.location.column > 1
            return Loaded(
                source: located ? LocalFiles.readText(path) : nil, pipeline: nil, diagnostics: [problem],
                baseDirectory: LocalFiles.directory(of: path))
        }
    }

    /// The largest pipeline or test file read (they are hand-written; a larger one is a mistake,
    /// such as `rivulet lint /dev/zero`).
    public static let maximumFileBytes = 4 << 20

    /// The text of a pipeline or test file: at most `maximumFileBytes`, UTF-8, without NUL bytes;
    /// otherwise the problem, located.
    public static func readPipelineFile(_ path: String) -> Result<String, Diagnostic> {
        let start = SourceLocation(file: path, line: 1, column: 1)
        guard let file = fopen(path, "rb") else {
            return .failure(.error("cannot read the file: \(String(cString: strerror(errno)))", at: start))
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= maximumFileBytes {
            let count = fread(&buffer, 1, buffer.count, file)
            if count > 0 { bytes.append(contentsOf: buffer[0..<count]) }
            if count < buffer.count { break }
        }
        if ferror(file) != 0 { return .failure(.error("cannot read the file", at: start)) }
        if bytes.count > maximumFileBytes {
            return .failure(
                .error(
                    "the file is larger than \(maximumFileBytes >> 20) MiB; a pipeline file is far smaller", at: start))
        }
        if let offset = bytes.firstIndex(of: 0) {
            return .failure(.error("the file has a NUL byte", at: location(ofByte: offset, in: bytes, path: path)))
        }
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return .success(String(decoding: bytes, as: UTF8.self))
            case .error:
                let hex = String(bytes[offset], radix: 16, uppercase: true)
                return .failure(
                    .error(
                        "the file is not UTF-8: byte 0x\(hex) cannot start a character",
                        at: location(ofByte: offset, in: bytes, path: path),
                        note: "save the file as UTF-8 (it may be Latin-1 or Shift_JIS)"))
            }
        }
    }

    /// The line and column (in characters) of byte `offset`.
    static func location(ofByte offset: Int, in bytes: [UInt8], path: String) -> SourceLocation {
        let lineStart = bytes[..<offset].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let line = bytes[..<offset].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).unicodeScalars.count + 1
        return SourceLocation(file: path, line: line, column: column)
    }

    /// Adds the credentials of every URL, and every libpq `password=`, written in a scalar of
    /// `node` to the secrets.
    static func addURLCredentials(of node: YAMLNode?) {
        guard let node else { return }
        switch node.kind {
        case .scalar(let text, _):
            if text.contains("@") { Secrets.shared.addURLCredentials(in: text) }
            if text.contains("password=") { ConnectionPasswords.add(in: text, to: Secrets.shared) }
        case .sequence(let items): items.forEach(addURLCredentials)
        case .mapping(let pairs):
            for pair in pairs { addURLCredentials(of: pair.value) }
        }
    }

    /// Checks `text` as the pipeline file `path`, after applying `overrides`.
    public func load(text: String, path: String, overrides: [Override] = []) -> Loaded {
        let directory = LocalFiles.directory(of: path)
        var root: YAMLNode?
        do {
            root = try YAMLLoader(file: path, environment: environment).load(text)
        } catch {
            return Loaded(source: text, pipeline: nil, diagnostics: error.diagnostics, baseDirectory: directory)
        }
        for override in overrides {
            do {
                root = try override.apply(to: root)
            } catch {
                return Loaded(source: text, pipeline: nil, diagnostics: [error], baseDirectory: directory)
            }
        }
        let (spec, structural) = SpecParser.parse(root, file: path)
        // Secret values are known before anything runs, so no message can show them.
        for name in Secrets.variables(in: text).filter(Secrets.isSecretName) + spec.secrets {
            if let value = environment[name] { Secrets.shared.add(value) }
        }
        // So are the credentials of any URL the file (after substitution and --set) or $NATS_URL holds.
        Self.addURLCredentials(of: root)
        if let url = environment["NATS_URL"] { Secrets.shared.addURLCredentials(in: url) }
        // libpq reads it itself: a `postgres` component never names it.
        if let password = environment["PGPASSWORD"] { Secrets.shared.add(password) }
        var pluginProblems: [Diagnostic] = []
        if let loadPlugin {
            for plugin in spec.plugins {
                let resolved = Validator.resolve(plugin.path, against: directory)
                guard access(resolved, F_OK) == 0 else { continue }  // the validator reports it
                if let problem = loadPlugin(resolved) { pluginProblems.append(.error(problem, at: plugin.location)) }
            }
        }
        let (pipeline, semantic) = Validator.validate(
            spec, registry: registry, baseDirectory: directory, fileExists: { access($0, F_OK) == 0 })
        var collector = DiagnosticCollector()
        for diagnostic in structural + pluginProblems + semantic { collector.add(diagnostic) }
        return Loaded(
            source: text, pipeline: collector.hasErrors ? nil : pipeline, diagnostics: collector.sorted,
            baseDirectory: directory)
    }
}
