/// Checks a pipeline's configuration against the registry before anything runs, collecting every
/// error: unknown components and parameters (with suggestions), wrong types, missing required
/// parameters, bad durations and enum values, expression syntax, unknown streams and side streams,
/// cycles, and plugin files that do not exist.
@_spi(Host) public struct Validator {
    let registry: ComponentRegistry
    let baseDirectory: String
    let fileExists: (String) -> Bool
    var diagnostics = DiagnosticCollector()
    var streamNames: Set<String> = []
    /// Whether a plugin the file names was not found: an unknown component may be one of its.
    var missesAPlugin = false
    var operatorIDs: [String: SideStreamOwner] = [:]
    var streamOperators: [String: [SideStreamOwner]] = [:]
    var sideStreams: [String: (stream: String, operatorIndex: Int, side: String)] = [:]
    var readerCounts: [String: Int] = [:]
    var brokenStreams: Set<String> = []
    /// What an unknown name was said to be (its suggestion and note), by kind and name: a file
    /// that misspells one name 20,000 times is told so in well under a second.
    var unknownNames: [String: (suggestion: String, note: String)] = [:]

    /// A component that may offer side streams: an operator (index 0...), a stream's source
    /// (`sourceIndex`) or a sink (below it: `sinkIndex(_:)`), with its `onError` as written.
    struct SideStreamOwner {
        let stream: String
        let index: Int
        let spec: ComponentSpec
        let onError: String?
        var hasID = false
    }

    /// The index under which a stream's source offers side streams.
    public static let sourceIndex = -1

    /// The index under which sink number `number` offers side streams (keyed by its input stream).
    public static func sinkIndex(_ number: Int) -> Int { -2 - number }

    /// Whether reading `side` of `owner` can see anything: an `errors` stream of a component that
    /// routes element errors is fed only under `onError: errors`.
    func isLive(_ owner: SideStreamOwner, side: String) -> Bool {
        side != "errors" || !owner.spec.routesElementErrors || owner.onError == ElementErrorPolicy.errors.rawValue
    }

    /// An error when `side` is an `errors` stream its component never feeds (its `onError` is not
    /// `errors`); true when the reference may stand.
    mutating func checkErrorsAreRouted(
        _ spec: ComponentSpec, side: String, onError: String?, at location: SourceLocation
    )
        -> Bool
    {
        guard side == "errors", spec.routesElementErrors, onError != ElementErrorPolicy.errors.rawValue else {
            return true
        }
        diagnostics.error(
            "the errors of \(spec.name) go to its 'errors' side stream only with onError: errors", at: location,
            note: "add 'onError: errors' to \(spec.name)\(onError.map { " (it says onError: \($0))" } ?? "")")
        return false
    }

    /// The `onError` a component's parameters write, if any.
    static func writtenOnError(_ use: ComponentUse) -> String? {
        use.onError?.value.scalar
            ?? use.parameters?.pairs?.first { $0.key.scalar == ElementErrors.onError.name }?.value.scalar
    }

    /// `path` as seen from `directory` (`./x` and `x` alike), unless it is absolute.
    public static func resolve(_ path: String, against directory: String) -> String {
        if path.hasPrefix("/") { return path }
        let relative = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
        return directory == "." ? relative : directory + "/" + relative
    }

    /// A validator over `registry`; relative plugin paths are resolved against `baseDirectory`.
    public init(registry: ComponentRegistry, baseDirectory: String, fileExists: @escaping (String) -> Bool) {
        self.registry = registry
        self.baseDirectory = baseDirectory
        self.fileExists = fileExists
    }

    /// The checked pipeline, or nil, and every diagnostic found.
    public static func validate(
        _ spec: PipelineSpec, registry: ComponentRegistry, baseDirectory: String, fileExists: @escaping (String) -> Bool
    ) -> (ValidatedPipeline?, [Diagnostic]) {
        var validator = Validator(registry: registry, baseDirectory: baseDirectory, fileExists: fileExists)
        let result = validator.validate(spec)
        return (validator.diagnostics.hasErrors ? nil : result, validator.diagnostics.diagnostics)
    }

    mutating func validate(_ spec: PipelineSpec) -> ValidatedPipeline {
        checkPlugins(spec)
        streamNames = Set(spec.streams.map(\.name))
        brokenStreams = spec.brokenStreams
        // First pass: component names, ids and side streams, so references can be checked in any order.
        registerSideStreamOwners(spec)
        var validatedStreams: [ValidatedStream] = []
        for stream in spec.streams {
            var dependencies: [ValidatedStream.Dependency] = []
            var origin: ValidatedStream.Origin?
            switch stream.origin {
            case .stream(let name, let location):
                if let dependency = checkStreamReference(name, at: location) { dependencies.append(dependency) }
                origin = .stream(name)
            case .component(let use):
                origin = checkComponent(use, kind: .source).map { .component($0) }
            }
            var operators: [ValidatedComponent] = []
            for use in stream.operators {
                // Every operator is checked even when the source was wrong, so all errors are reported.
                guard let component = checkComponent(use, kind: .operator, dependencies: &dependencies) else {
                    continue
                }
                operators.append(component)
            }
            guard let origin else { continue }
            validatedStreams.append(
                ValidatedStream(
                    name: stream.name, location: stream.location, origin: origin, operators: operators,
                    dependencies: dependencies))
        }
        var sinks: [(String, ValidatedComponent)] = []
        for sink in spec.sinks {
            _ = checkStreamReference(sink.stream, at: sink.streamLocation)
            if let component = checkComponent(sink.component, kind: .sink) { sinks.append((sink.stream, component)) }
        }
        let ordered = orderStreams(validatedStreams, spec: spec)
        return ValidatedPipeline(
            spec: spec, streams: ordered, sinks: sinks, sideStreams: sideStreams, readerCounts: readerCounts)
    }

    /// Every plugin file the pipeline names must exist (one under a package's `.build` folder
    /// was not built yet: the note says how).
    private mutating func checkPlugins(_ spec: PipelineSpec) {
        for plugin in spec.plugins {
            let path = Self.resolve(plugin.path, against: baseDirectory)
            if !fileExists(path) {
                // A plugin under a package's .build folder is one that was not built yet.
                missesAPlugin = true
                let package = path.firstRange(of: "/.build/").map { String(path[..<$0.lowerBound]) }
                diagnostics.error(
                    "plugin file '\(plugin.path)' not found", at: plugin.location,
                    note: "looked for \(path)"
                        + (package.map { "; build it first: swift build --package-path \($0)" } ?? ""))
            }
        }
    }

    /// The components that may offer side streams, by stream and place, and the ids given to
    /// them (each id checked to be new).
    private mutating func registerSideStreamOwners(_ spec: PipelineSpec) {
        for stream in spec.streams {
            var owners: [SideStreamOwner] = []
            if case .component(let use) = stream.origin, let component = registry.spec(use.name, kind: .source) {
                owners.append(
                    SideStreamOwner(
                        stream: stream.name, index: Self.sourceIndex, spec: component, onError: Self.writtenOnError(use)
                    ))
            }
            for (index, use) in stream.operators.enumerated() {
                guard let component = registry.spec(use.name, kind: .operator) else { continue }
                let owner = SideStreamOwner(
                    stream: stream.name, index: index, spec: component, onError: Self.writtenOnError(use),
                    hasID: use.id != nil)
                owners.append(owner)
                if let id = use.id { register(id: id, owner, use) }
            }
            streamOperators[stream.name] = owners
        }
        for (number, sink) in spec.sinks.enumerated() {
            guard let id = sink.component.id, let component = registry.spec(sink.component.name, kind: .sink) else {
                continue
            }
            register(
                id: id,
                SideStreamOwner(
                    stream: sink.stream, index: Self.sinkIndex(number), spec: component,
                    onError: Self.writtenOnError(sink.component)), sink.component)
        }
    }

    mutating func register(id: String, _ owner: SideStreamOwner, _ use: ComponentUse) {
        if streamNames.contains(id) || operatorIDs[id] != nil {
            diagnostics.error(
                "id '\(id)' is already the name of a stream or another component", at: use.idLocation ?? use.location)
        }
        operatorIDs[id] = owner
    }

    /// Checks a reference to a stream or side stream; returns what the reader depends on.
    mutating func checkStreamReference(_ reference: String, at location: SourceLocation)
        -> ValidatedStream.Dependency?
    {
        readerCounts[reference, default: 0] += 1
        if streamNames.contains(reference) { return .init(name: reference, location: location) }
        if brokenStreams.contains(reference) || brokenStreams.contains(String(reference.prefix { $0 != "." })) {
            return nil
        }
        let parts = reference.split(separator: ".", maxSplits: 1).map(String.init)
        if parts.count == 2 {
            let (owner, side) = (parts[0], parts[1])
            if let op = operatorIDs[owner] {
                let what = op.index == Self.sourceIndex ? "source" : op.index < Self.sourceIndex ? "sink" : "operator"
                guard op.spec.sideStreams.contains(side) else {
                    diagnostics.error(
                        "\(what) '\(owner)' (\(op.spec.name)) has no side stream '\(side)'\(Suggestions.didYouMean(side, in: op.spec.sideStreams))",
                        at: location,
                        note: op.spec.sideStreams.isEmpty
                            ? "\(op.spec.name) has no side streams"
                            : "its side streams: \(op.spec.sideStreams.joined(separator: ", "))")
                    return nil
                }
                guard checkErrorsAreRouted(op.spec, side: side, onError: op.onError, at: location) else { return nil }
                sideStreams[reference] = (op.stream, op.index, side)
                return .init(name: op.stream, location: location, isSideStream: true, reference: reference)
            }
            if streamNames.contains(owner) {
                return checkSideStream(side, ofStream: owner, reference: reference, at: location)
            }
        }
        let known = Array(streamNames) + Array(operatorIDs.keys)
        let base = parts.count == 2 ? parts[0] : reference
        diagnostics.error(
            "unknown stream '\(base)'\(Suggestions.didYouMean(base, in: known))", at: location,
            note: streamNames.isEmpty ? nil : "streams: \(streamNames.sorted().joined(separator: ", "))")
        return nil
    }

    /// `STREAM.side`: the side stream of the one component of `stream` that offers it (the one
    /// without an id when several do); an error when none or several do.
    private mutating func checkSideStream(
        _ side: String, ofStream owner: String, reference: String, at location: SourceLocation
    ) -> ValidatedStream.Dependency? {
        let offering = (streamOperators[owner] ?? []).filter { $0.spec.sideStreams.contains(side) }
        // An `errors` stream that onError never feeds does not count, unless it is the only one
        // (which then gets the error saying what to add).
        var live = offering.filter { isLive($0, side: side) }
        // Those with an id are read as ID.side; STREAM.side names the one without.
        if live.count > 1 && live.contains(where: { !$0.hasID }) { live.removeAll(where: \.hasID) }
        let candidates = live.isEmpty && offering.count == 1 ? offering : live
        if candidates.count == 1 {
            guard checkErrorsAreRouted(candidates[0].spec, side: side, onError: candidates[0].onError, at: location)
            else { return nil }
            sideStreams[reference] = (owner, candidates[0].index, side)
            return .init(name: owner, location: location, isSideStream: true, reference: reference)
        }
        if candidates.isEmpty {
            let sides = Set((streamOperators[owner] ?? []).flatMap(\.spec.sideStreams)).sorted()
            if !sides.isEmpty {
                diagnostics.error(
                    "stream '\(owner)' has no side stream '\(side)'\(Suggestions.didYouMean(side, in: sides))",
                    at: location, note: "its side streams: \(sides.joined(separator: ", "))")
            } else {
                let offering = registry.all.filter { !$0.sideStreams.isEmpty }.map(\.name)
                diagnostics.error(
                    "stream '\(owner)' has no component with a side stream '\(side)'", at: location,
                    note: "side streams come from \(offering.joined(separator: ", "))")
            }
        } else {
            diagnostics.error(
                "stream '\(owner)' has \(candidates.count) components with a side stream '\(side)'; give one an 'id' and write ID.\(side)",
                at: location)
        }
        return nil
    }

    mutating func checkComponent(_ use: ComponentUse, kind: ComponentKind) -> ValidatedComponent? {
        var ignored: [ValidatedStream.Dependency] = []
        return checkComponent(use, kind: kind, dependencies: &ignored)
    }

    mutating func checkComponent(
        _ use: ComponentUse, kind: ComponentKind, dependencies: inout [ValidatedStream.Dependency]
    )
        -> ValidatedComponent?
    {
        if let besides = use.besides {
            // A parameter written beside the short form (`file: out.csv, mode: append`) is told how
            // to write it; another name, what a comma or a missing `- ` did.
            let spec = registry.spec(use.name, kind: kind)
            let isParameter = besides.key.scalar.flatMap { spec?.parameter($0) } != nil
            let (message, note) = SpecParser.oneComponentPerItem(
                kind.rawValue, name: use.name, besides: besides,
                of: use.parameters ?? YAMLNode(kind: .scalar("", .plain), location: use.location),
                isParameter: isParameter, shortForm: spec?.primary)
            diagnostics.error(message, at: besides.key.location, note: note)
        }
        guard let spec = registry.spec(use.name, kind: kind) else {
            if let other = registry.specs(named: use.name).first {
                diagnostics.error(
                    "'\(use.name)' is \(other.kind.withArticle), not \(kind.withArticle)", at: use.location)
                return nil
            }
            let said =
                unknownNames["\(kind.rawValue) \(use.name)"]
                ?? {
                    var note = "see 'rivulet components' for every \(kind.rawValue)"
                    if let owner = registry.all.first(where: { $0.kind == kind && $0.parameter(use.name) != nil }) {
                        note = "'\(use.name)' is a parameter of \(owner.name): { \(owner.name): { \(use.name): ... } }"
                    } else if missesAPlugin {
                        note = "the plugin that was not found may have it"
                    }
                    return (Suggestions.didYouMean(use.name, in: registry.names(of: kind)), note)
                }()
            unknownNames["\(kind.rawValue) \(use.name)"] = said
            diagnostics.error(
                "unknown \(kind.rawValue) '\(use.name)'\(said.suggestion)", at: use.location, note: said.note)
            return nil
        }
        guard
            let parameters = resolveParameters(
                of: spec, node: withOnError(use, spec), at: use.location, dependencies: &dependencies)
        else {
            return nil
        }
        if let validate = spec.validate {
            let validation = ComponentValidation(owner: spec.name, location: use.location, baseDirectory: baseDirectory)
            validate(parameters, validation)
            for diagnostic in validation.diagnostics { diagnostics.add(diagnostic) }
            if validation.diagnostics.contains(where: { $0.severity == .error }) { return nil }
        }
        return ValidatedComponent(use: use, spec: spec, parameters: parameters)
    }

    /// The component's parameters with an `onError` written beside its name moved among them.
    mutating func withOnError(_ use: ComponentUse, _ spec: ComponentSpec) -> YAMLNode? {
        guard let onError = use.onError else { return use.parameters }
        guard spec.parameter(onError.key.scalar ?? "") != nil else {
            diagnostics.error(
                "\(spec.name) takes no onError: it cannot fail on one element", at: onError.key.location)
            return use.parameters
        }
        guard let node = use.parameters else {
            return YAMLNode(kind: .mapping([onError]), location: onError.key.location)
        }
        if let pairs = node.pairs,
            mappingIsParameters(pairs, of: spec.parameters, primary: spec.primary.flatMap(spec.parameter))
        {
            return YAMLNode(kind: .mapping(pairs + [onError]), location: node.location)
        }
        guard let primary = spec.primary else { return node }
        let key = YAMLNode(kind: .scalar(primary, .plain), location: node.location)
        return YAMLNode(kind: .mapping([YAMLPair(key: key, value: node), onError]), location: node.location)
    }

    /// Whether a mapping given to `spec` is its parameters (every key is one) or the primary value.
    func mappingIsParameters(_ pairs: [YAMLPair], of parameters: [ParameterSpec], primary: ParameterSpec?) -> Bool {
        guard let primary else { return true }
        let names = Set(parameters.map(\.name))
        // Any parameter name among the keys means the mapping is the parameters (so a stray key is
        // reported as an unknown parameter); otherwise it is the value of the short form.
        let anyKnown = pairs.contains { names.contains($0.key.scalar ?? "") }
        switch primary.type {
        case .valueExpression, .source, .map, .value, .list:
            return anyKnown
        default:
            return true
        }
    }
}
