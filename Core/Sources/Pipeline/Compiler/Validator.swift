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
        streamNames = Set(spec.streams.map(\.name))
        brokenStreams = spec.brokenStreams
        // First pass: component names, ids and side streams, so references can be checked in any order.
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
                let offering = (streamOperators[owner] ?? []).filter { $0.spec.sideStreams.contains(side) }
                // An `errors` stream that onError never feeds does not count, unless it is the only
                // one (which then gets the error saying what to add).
                var live = offering.filter { isLive($0, side: side) }
                // Those with an id are read as ID.side; STREAM.side names the one without.
                if live.count > 1 && live.contains(where: { !$0.hasID }) { live.removeAll(where: \.hasID) }
                let candidates = live.isEmpty && offering.count == 1 ? offering : live
                if candidates.count == 1 {
                    guard
                        checkErrorsAreRouted(
                            candidates[0].spec, side: side, onError: candidates[0].onError, at: location)
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
        }
        let known = Array(streamNames) + Array(operatorIDs.keys)
        let base = parts.count == 2 ? parts[0] : reference
        diagnostics.error(
            "unknown stream '\(base)'\(Suggestions.didYouMean(base, in: known))", at: location,
            note: streamNames.isEmpty ? nil : "streams: \(streamNames.sorted().joined(separator: ", "))")
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

    mutating func resolveParameters(
        of spec: ComponentSpec, node: YAMLNode?, at location: SourceLocation,
        dependencies: inout [ValidatedStream.Dependency]
    ) -> ParameterValues? {
        resolveParameters(
            spec.parameters, primary: spec.primary, owner: spec.name, node: node, at: location,
            dependencies: &dependencies)
    }

    mutating func resolveParameters(
        _ parameters: [ParameterSpec], primary primaryName: String?, owner: String, node: YAMLNode?,
        at location: SourceLocation, dependencies: inout [ValidatedStream.Dependency]
    ) -> ParameterValues? {
        var values = ParameterValues()
        var ok = true
        let primary = primaryName.flatMap { name in parameters.first { $0.name == name } }
        var given: [(ParameterSpec, YAMLNode, SourceLocation)] = []
        if let node {
            if let pairs = node.pairs, mappingIsParameters(pairs, of: parameters, primary: primary) {
                for pair in pairs {
                    let key = pair.key.scalar ?? "?"
                    guard let parameter = parameters.first(where: { $0.name == key }) else {
                        let names = parameters.map(\.name)
                        let looksCut =
                            node.isFlowStyle
                            && (key.first?.isNumber == true
                                || !key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" })
                        diagnostics.error(
                            "unknown parameter '\(key)' of \(owner)\(Suggestions.didYouMean(key, in: names))",
                            at: pair.key.location,
                            note: looksCut
                                ? "inside { } and [ ] a comma ends a value: quote an expression that contains commas"
                                : (names.isEmpty
                                    ? "\(owner) takes no parameters"
                                    : "\(owner) takes: \(names.joined(separator: ", "))"))
                        ok = false
                        continue
                    }
                    given.append((parameter, pair.value, pair.key.location))
                }
            } else if let primary {
                given.append((primary, node, node.location))
            } else {
                let names = parameters.map(\.name)
                diagnostics.error(
                    "\(owner) takes its parameters as a mapping, not \(node.kindName)", at: node.location,
                    note: names.isEmpty
                        ? "\(owner) takes no parameters; write just '\(owner)'"
                        : "\(owner) takes: \(names.joined(separator: ", "))")
                return nil
            }
        }
        for (parameter, valueNode, _) in given {
            if case .scalar("", .plain) = valueNode.kind, parameter.type.rejectsEmpty {
                diagnostics.error(
                    "parameter '\(parameter.name)' of \(owner) needs a value (\(parameter.type))",
                    at: valueNode.location)
                ok = false
                continue
            }
            let read = dependencies.count
            let converted = convert(
                valueNode, to: parameter.type, name: parameter.name, owner: owner, dependencies: &dependencies)
            if parameter.isSampled {
                for index in read..<dependencies.count { dependencies[index].isSampled = true }
            }
            guard let value = converted else {
                ok = false
                continue
            }
            if let problem = parameter.bound?(value) {
                diagnostics.error(
                    "parameter '\(parameter.name)' of \(owner) must be \(problem), got \(valueNode.scalar ?? "\(value)")",
                    at: valueNode.location)
                ok = false
                continue
            }
            values.values[parameter.name] = value
            values.locations[parameter.name] = valueNode.location
            if let items = valueNode.items { values.itemLocations[parameter.name] = items.map(\.location) }
        }
        for parameter in parameters where parameter.required && values.values[parameter.name] == nil {
            if given.contains(where: { $0.0.name == parameter.name }) { continue }
            let example = parameter.example.map { " (for example \(parameter.name): \($0))" } ?? ""
            diagnostics.error(
                "\(owner) needs parameter '\(parameter.name)'\(example)", at: location, note: parameter.doc)
            ok = false
        }
        return ok ? values : nil
    }

    /// Where offset `offset` inside a scalar's text is in the file.
    /// The comma note for an expression that ends too soon where a comma may have cut it.
    static func cutShortNote(_ node: YAMLNode, _ error: ExpressionSyntaxError) -> String? {
        guard let text = node.scalar,
            error.offset >= text.unicodeScalars.count || error.message.contains("end of the expression")
        else { return nil }
        return node.commaNote
    }

    func location(in node: YAMLNode, offset: Int) -> SourceLocation {
        guard case .scalar(let text, let style) = node.kind else { return node.location }
        if style == .block {
            let before = text.unicodeScalars.prefix(offset)
            let lines = before.split(separator: "\n", omittingEmptySubsequences: false)
            return SourceLocation(
                file: node.location.file, line: node.location.line + lines.count, column: (lines.last?.count ?? 0) + 1)
        }
        return node.contentLocation.advanced(by: offset)
    }

    /// The value `node` gives a parameter of `type`, as the Swift value `ParameterValues` holds
    /// for it; nil after reporting why not.
    mutating func convert(
        _ node: YAMLNode, to type: ParameterType, name: String, owner: String,
        dependencies: inout [ValidatedStream.Dependency]
    ) -> Any? {
        func typeError(_ expected: String) -> Any? {
            let got: String
            if case .scalar(let text, _) = node.kind { got = "'\(text)'" } else { got = node.kindName }
            diagnostics.error("parameter '\(name)' of \(owner) must be \(expected), got \(got)", at: node.location)
            return nil
        }
        switch type {
        case .string:
            guard let text = node.scalar else { return typeError("a string") }
            return text
        case .template:
            guard let text = node.scalar else { return typeError("a string") }
            do {
                return try Template(text)
            } catch {
                diagnostics.error(
                    "invalid template in '\(name)': \(error.message)", at: location(in: node, offset: error.offset))
                return nil
            }
        case .expression:
            guard let text = node.scalar else { return typeError("an expression") }
            do {
                return try Expression(text)
            } catch {
                diagnostics.error(
                    "invalid expression in '\(name)' of \(owner): \(error.message)",
                    at: location(in: node, offset: error.offset), note: Self.cutShortNote(node, error))
                return nil
            }
        case .valueExpression:
            return compileValueExpression(node, name: name, owner: owner)
        case .int:
            guard let text = node.scalar, case .int(let int) = YAMLNode.resolvePlain(text) else {
                return typeError("an integer")
            }
            return int
        case .number:
            guard let text = node.scalar, let number = YAMLNode.resolvePlain(text).doubleValue else {
                return typeError("a number")
            }
            return number
        case .bool:
            guard let text = node.scalar, case .bool(let bool) = YAMLNode.resolvePlain(text) else {
                return typeError("true or false")
            }
            return bool
        case .duration:
            guard let text = node.scalar else { return typeError("a duration such as 500ms") }
            guard let duration = DurationSyntax.parse(text) else {
                diagnostics.error(
                    "invalid duration '\(text)' for '\(name)' of \(owner)\(DurationSyntax.hint(for: text))",
                    at: node.location)
                return nil
            }
            return duration
        case .oneOf(let words):
            guard let text = node.scalar else { return typeError("one of \(words.joined(separator: ", "))") }
            guard words.contains(text) else {
                diagnostics.error(
                    "invalid value '\(text)' for '\(name)' of \(owner)\(Suggestions.didYouMean(text, in: words))",
                    at: node.location,
                    note: "allowed values: \(words.joined(separator: ", "))")
                return nil
            }
            return text
        case .list(let element):
            let items = node.items ?? [node]
            var converted: [Any] = []
            var ok = true
            for item in items {
                if let value = convert(item, to: element, name: name, owner: owner, dependencies: &dependencies) {
                    converted.append(value)
                } else {
                    ok = false
                }
            }
            return ok ? converted : nil
        case .value:
            return node.toValue()
        case .stream:
            guard let reference = node.scalar else { return typeError("a stream name") }
            if let dependency = checkStreamReference(reference, at: node.location) { dependencies.append(dependency) }
            return StreamName(reference)
        case .source:
            guard let pairs = node.pairs, pairs.count == 1, let sourceName = pairs[0].key.scalar else {
                let sources = registry.names(of: .source)
                diagnostics.error(
                    "parameter '\(name)' of \(owner) must be a source, written as a mapping such as { http: { url: ... } }",
                    at: node.location, note: "sources: \(sources.joined(separator: ", "))")
                return nil
            }
            let use = ComponentUse(
                name: sourceName, location: pairs[0].key.location,
                parameters: {
                    if case .scalar("", .plain) = pairs[0].value.kind { return nil } else { return pairs[0].value }
                }(),
                id: nil)
            guard let component = checkComponent(use, kind: .source, dependencies: &dependencies) else { return nil }
            return ParameterValues.InnerSource(
                spec: component.spec, parameters: component.parameters, location: use.location)
        case .operators:
            guard let items = node.items else { return typeError("a list of operators, as a stream's ops") }
            var parser = SpecParser(file: node.location.file)
            var operators: [ValidatedComponent] = []
            var ok = true
            for item in items {
                guard let use = parser.componentUse(item, what: "operator") else {
                    ok = false
                    continue
                }
                if let component = checkComponent(use, kind: .operator, dependencies: &dependencies) {
                    operators.append(component)
                } else {
                    ok = false
                }
            }
            for diagnostic in parser.diagnostics.diagnostics { diagnostics.add(diagnostic) }
            return ok ? ParameterValues.OperatorChain(operators: operators, location: node.location) : nil
        case .map(let element):
            guard let pairs = node.pairs else { return typeError("a mapping") }
            var converted: [(String, Any)] = []
            var ok = true
            for pair in pairs {
                if let value = convert(
                    pair.value, to: element, name: "\(name).\(pair.key.scalar ?? "?")", owner: owner,
                    dependencies: &dependencies)
                {
                    converted.append((pair.key.scalar ?? "", value))
                } else {
                    ok = false
                }
            }
            return ok ? converted : nil
        case .object(let parameters):
            guard node.pairs != nil else { return typeError("a mapping") }
            return resolveParameters(
                parameters, primary: nil, owner: "\(owner).\(name)", node: node, at: node.location,
                dependencies: &dependencies)
        }
    }

    /// An expression, or a mapping/list of them, compiled into one expression building the value.
    mutating func compileValueExpression(_ node: YAMLNode, name: String, owner: String) -> Expression? {
        switch node.kind {
        case .scalar(let text, let style):
            if style == .quoted && text.contains("{{") {
                do {
                    let template = try Template(text)
                    return Expression.template(template)
                } catch {
                    diagnostics.error(
                        "invalid template in '\(name)': \(error.message)", at: location(in: node, offset: error.offset))
                    return nil
                }
            }
            do {
                return try Expression(text)
            } catch {
                diagnostics.error(
                    "invalid expression in '\(name)' of \(owner): \(error.message)",
                    at: location(in: node, offset: error.offset), note: Self.cutShortNote(node, error))
                return nil
            }
        case .sequence(let items):
            var elements: [Expression] = []
            var ok = true
            for item in items {
                if let expression = compileValueExpression(item, name: name, owner: owner) {
                    elements.append(expression)
                } else {
                    ok = false
                }
            }
            return ok ? Expression.array(elements) : nil
        case .mapping(let pairs):
            var members: [(String, Expression)] = []
            var ok = true
            for pair in pairs {
                let key = pair.key.scalar ?? "?"
                if let expression = compileValueExpression(pair.value, name: "\(name).\(key)", owner: owner) {
                    members.append((key, expression))
                } else {
                    ok = false
                }
            }
            return ok ? Expression.object(members) : nil
        }
    }

    /// The streams in dependency order; a cycle is an error naming it.
    mutating func orderStreams(_ streams: [ValidatedStream], spec: PipelineSpec) -> [ValidatedStream] {
        let byName = Dictionary(streams.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var ordered: [ValidatedStream] = []
        var state: [String: Int] = [:]
        var reported = false
        // `reference` is where the stream being visited is named by the one before it in `path`.
        func visit(_ name: String, path: [String], reference: SourceLocation?) {
            guard let stream = byName[name] else { return }
            if state[name] == 2 { return }
            if state[name] == 1 {
                if !reported {
                    reported = true
                    let cycle = path.drop { $0 != name } + [name]
                    // At the reference that closes the cycle, where the fix usually is.
                    diagnostics.error(
                        "streams form a cycle: \(cycle.joined(separator: " → "))",
                        at: reference ?? stream.location)
                }
                return
            }
            state[name] = 1
            // A side stream's subject exists before any stream is built: no need to build its owner first.
            for dependency in stream.dependencies where !dependency.isSideStream {
                visit(dependency.name, path: path + [name], reference: dependency.location)
            }
            state[name] = 2
            ordered.append(stream)
        }
        for stream in streams { visit(stream.name, path: [], reference: nil) }
        if !reported { checkFeedbackLoops(streams, byName: byName) }
        return ordered
    }

    /// A stream may read a side stream of an operator downstream of it (a page counter fed by an
    /// action's elements), but such a loop must be closed by a read that only samples
    /// (`withLatestFrom`'s stream): otherwise what an operator reports feeds it again at once,
    /// without end (an action refusing its own errors would recurse until the stack is gone).
    mutating func checkFeedbackLoops(_ streams: [ValidatedStream], byName: [String: ValidatedStream]) {
        var state: [String: Int] = [:]
        func visit(_ name: String, path: [(String, ValidatedStream.Dependency?)]) -> Bool {
            guard let stream = byName[name] else { return false }
            if state[name] == 2 { return false }
            if state[name] == 1 {
                let loop = Array(path.drop { $0.0 != name })
                // `a → x.errors → a`: each stream, and the side stream through which it reads the next.
                let names =
                    loop.flatMap { step -> [String] in
                        guard let edge = step.1, edge.isSideStream else { return [step.0] }
                        return [step.0, edge.reference]
                    } + [name]
                let closing = loop.compactMap(\.1).last { $0.isSideStream } ?? loop.compactMap(\.1).last
                diagnostics.error(
                    "streams feed themselves without end: \(names.joined(separator: " → ")); close the loop with withLatestFrom, which reads the latest element without emitting",
                    at: closing?.location ?? stream.location,
                    note:
                        "a stream may read a side stream of an operator downstream of it only through a read that samples (withLatestFrom's stream)"
                )
                return true
            }
            state[name] = 1
            for dependency in stream.dependencies where !dependency.isSampled {
                if visit(dependency.name, path: path + [(name, dependency)]) { return true }
            }
            state[name] = 2
            return false
        }
        for stream in streams where visit(stream.name, path: []) { return }
    }
}

extension ParameterType {
    var rejectsEmpty: Bool {
        switch self {
        case .value, .string: return false
        default: return true
        }
    }
}

extension Expression {
    /// An expression that renders a template.
    static func template(_ template: Template) -> Expression {
        Expression(
            source: template.source, evaluator: { scope in try template.render(in: scope) }, usesAccumulator: false,
            // A template may call now() or random(); it is not run in parallel.
            isPure: false)
    }
}
