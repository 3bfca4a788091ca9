/// Reads a pipeline file's YAML into a `PipelineSpec`, collecting every structural error.
@_spi(Host) public struct SpecParser {
    static let topLevelKeys = [
        "name", "description", "plugins", "seed", "secrets", "parallel", "source", "eventTime", "ops", "sink", "sinks",
        "streams",
    ]
    static let streamKeys = ["source", "eventTime", "ops"]

    let file: String
    var diagnostics = DiagnosticCollector()

    /// A parser for `file`.
    public init(file: String) {
        self.file = file
    }

    /// The spec, and what was wrong with the file's structure.
    public static func parse(_ root: YAMLNode?, file: String) -> (PipelineSpec, [Diagnostic]) {
        var parser = SpecParser(file: file)
        let spec = parser.parse(root)
        return (spec, parser.diagnostics.diagnostics)
    }

    mutating func parse(_ root: YAMLNode?) -> PipelineSpec {
        var spec = PipelineSpec(file: file)
        let start = SourceLocation(file: file, line: 1, column: 1)
        guard let root else {
            diagnostics.error("the pipeline file is empty", at: start, note: "a pipeline needs a 'source' and a 'sink'")
            return spec
        }
        guard let pairs = root.pairs else {
            diagnostics.error(
                "a pipeline file is a mapping of keys (name, source, ops, sink, ...), not \(root.kindName)",
                at: root.location)
            return spec
        }
        for pair in pairs {
            guard let key = pair.key.scalar, Self.topLevelKeys.contains(key) else {
                let key = pair.key.scalar ?? "?"
                diagnostics.error(
                    "unknown key '\(key)'\(Suggestions.didYouMean(key, in: Self.topLevelKeys))", at: pair.key.location,
                    note: "a pipeline file's keys are: \(Self.topLevelKeys.joined(separator: ", "))")
                continue
            }
            readSetting(key, pair.value, into: &spec)
        }
        let linearKeys = pairs.filter { ["source", "eventTime", "ops", "sink"].contains($0.key.scalar ?? "") }
        let graphKey = pairs.first { $0.key.scalar == "streams" }
        if let graphKey, let linear = linearKeys.first {
            diagnostics.error(
                "this file mixes the linear form ('\(linear.key.scalar!)') with the graph form ('streams'); use one of them",
                at: graphKey.key.location,
                note: "linear: source, ops, sink; graph: streams (each with source and ops) and sinks")
            // Checking further would only report the consequences of mixing the forms.
            return spec
        }
        if let graphKey {
            spec.form = .graph
            parseStreams(graphKey.value, into: &spec)
        } else {
            spec.form = .linear
            parseLinear(root, into: &spec)
        }
        if let sinks = root["sinks"] {
            parseSinks(sinks, into: &spec)
        } else if let sink = root["sink"] {
            if spec.form == .graph && root["streams"] != nil && linearKeys.isEmpty {
                diagnostics.error(
                    "the graph form lists its sinks under 'sinks', each naming its stream", at: sink.location)
            } else if let use = componentUse(sink, what: "sink") {
                spec.sinks.append(
                    SinkSpec(stream: PipelineSpec.linearStreamName, streamLocation: use.location, component: use))
            }
        } else {
            diagnostics.error(
                "the pipeline has no sink; add 'sink:' (or 'sinks:')", at: root.location,
                note: "for example: sink: stdout")
        }
        return spec
    }

    /// One of the settings beside the streams (`name`, `description`, `seed`, `parallel`,
    /// `secrets`, `plugins`); the other top-level keys are read with the streams.
    private mutating func readSetting(_ key: String, _ value: YAMLNode, into spec: inout PipelineSpec) {
        switch key {
        case "name": spec.name = scalar(value, "name")
        case "description": spec.description = scalar(value, "description")
        case "seed":
            if let text = value.scalar, let seed = UInt64(text) {
                spec.seed = seed
            } else {
                diagnostics.error("'seed' must be a non-negative integer", at: value.location)
            }
        case "parallel":
            if let text = value.scalar, let workers = Int(text), (1...64).contains(workers) {
                spec.parallel = workers
            } else {
                diagnostics.error(
                    "'parallel' must be a number of workers from 1 to 64", at: value.location,
                    note: "parallel: 2 runs the stateless operators after a JSON Lines file on two cores")
            }
        case "secrets":
            for item in value.items ?? [value] {
                if let name = scalar(item, "an environment variable's name") { spec.secrets.append(name) }
            }
        case "plugins":
            let items = value.items ?? [value]
            for item in items {
                if let path = scalar(item, "a plugin path") { spec.plugins.append((path, item.location)) }
            }
        default: break
        }
    }

    mutating func scalar(_ node: YAMLNode, _ what: String) -> String? {
        guard let text = node.scalar else {
            diagnostics.error("\(what) must be a single value, not \(node.kindName)", at: node.location)
            return nil
        }
        return text
    }

    mutating func parseLinear(_ root: YAMLNode, into spec: inout PipelineSpec) {
        guard let sourceNode = root["source"] else {
            diagnostics.error(
                "the pipeline has no source; add 'source:' (or use the graph form with 'streams:')", at: root.location,
                note: "for example: source: { events: [{ at: 0ms, next: hello }] }")
            spec.brokenStreams.insert(PipelineSpec.linearStreamName)
            return
        }
        guard let origin = streamOrigin(sourceNode) else {
            spec.brokenStreams.insert(PipelineSpec.linearStreamName)
            return
        }
        let operators = eventTime(root) + parseOperators(root["ops"])
        let location = root.pairs?.first { $0.key.scalar == "source" }?.key.location ?? root.location
        spec.streams.append(
            StreamSpec(name: PipelineSpec.linearStreamName, location: location, origin: origin, operators: operators))
    }

    mutating func parseStreams(_ node: YAMLNode, into spec: inout PipelineSpec) {
        guard let pairs = node.pairs else {
            diagnostics.error(
                "'streams' maps each stream's name to its source and ops, not \(node.kindName)", at: node.location)
            return
        }
        for pair in pairs {
            guard let name = pair.key.scalar, !name.isEmpty else {
                diagnostics.error("a stream's name must be a single word", at: pair.key.location)
                continue
            }
            if name.contains(".") || name.contains(" ") {
                diagnostics.error(
                    "stream name '\(name)' may not contain '.' or spaces ('.' names side streams)",
                    at: pair.key.location)
            }
            guard let body = pair.value.pairs else {
                diagnostics.error("stream '\(name)' needs a mapping with 'source' and 'ops'", at: pair.value.location)
                spec.brokenStreams.insert(name)
                continue
            }
            var suggestedSource = false
            for key in body where !Self.streamKeys.contains(key.key.scalar ?? "") {
                let keyName = key.key.scalar ?? "?"
                let suggestion = Suggestions.closest(to: keyName, in: Self.streamKeys)
                suggestedSource = suggestedSource || suggestion == "source"
                diagnostics.error(
                    "unknown key '\(keyName)' in stream '\(name)'\(Suggestions.didYouMean(keyName, in: Self.streamKeys))",
                    at: key.key.location, note: "a stream has 'source', 'ops' and, for event time, 'eventTime'")
            }
            guard let sourceNode = pair.value["source"] else {
                if !suggestedSource { diagnostics.error("stream '\(name)' has no 'source'", at: pair.key.location) }
                spec.brokenStreams.insert(name)
                continue
            }
            guard let origin = streamOrigin(sourceNode) else {
                spec.brokenStreams.insert(name)
                continue
            }
            spec.streams.append(
                StreamSpec(
                    name: name, location: pair.key.location, origin: origin,
                    operators: eventTime(pair.value) + parseOperators(pair.value["ops"])))
        }
    }

    /// A stream's `eventTime: {...}`, read as its first operator (the `eventTime` component).
    func eventTime(_ stream: YAMLNode) -> [ComponentUse] {
        guard let pair = stream.pairs?.first(where: { $0.key.scalar == "eventTime" }) else { return [] }
        return [ComponentUse(name: "eventTime", location: pair.key.location, parameters: pair.value, id: nil)]
    }

    mutating func streamOrigin(_ node: YAMLNode) -> StreamSpec.Origin? {
        if let pairs = node.pairs, pairs.count == 1, pairs[0].key.scalar == "stream" {
            guard let name = pairs[0].value.scalar else {
                diagnostics.error("'stream' names another stream", at: pairs[0].value.location)
                return nil
            }
            return .stream(name, pairs[0].value.location)
        }
        return componentUse(node, what: "source").map { .component($0) }
    }

    mutating func parseOperators(_ node: YAMLNode?) -> [ComponentUse] {
        guard let node else { return [] }
        guard let items = node.items else {
            if case .scalar("", .plain) = node.kind { return [] }
            diagnostics.error("'ops' is a list of operators, each on a line starting with '- '", at: node.location)
            return []
        }
        return items.compactMap { componentUse($0, what: "operator", allowsID: true) }
    }

    mutating func parseSinks(_ node: YAMLNode, into spec: inout PipelineSpec) {
        guard let items = node.items else {
            diagnostics.error("'sinks' is a list; each item names a sink and the stream it reads", at: node.location)
            return
        }
        for item in items {
            var streamName = PipelineSpec.linearStreamName
            var streamLocation = item.location
            var explicitStream = false
            var body = item
            if let pairs = item.pairs, let streamPair = pairs.first(where: { $0.key.scalar == "stream" }) {
                streamName = streamPair.value.scalar ?? ""
                streamLocation = streamPair.value.location
                explicitStream = true
                body = YAMLNode(kind: .mapping(pairs.filter { $0.key.scalar != "stream" }), location: item.location)
            }
            guard let use = componentUse(body, what: "sink", allowsID: true) else { continue }
            if !explicitStream {
                if spec.form == .graph {
                    diagnostics.error(
                        "sink '\(use.name)' must say which stream it reads: add 'stream: NAME'", at: use.location)
                    continue
                }
                streamLocation = use.location
            }
            spec.sinks.append(SinkSpec(stream: streamName, streamLocation: streamLocation, component: use))
        }
    }

    /// Keys written beside a component's name that are not components.
    static let besideKeys: Set<String> = ["id", "onError"]

    /// `name`, or a mapping with one component key (and, for operators and sinks, an optional `id`).
    mutating func componentUse(_ node: YAMLNode, what: String, allowsID: Bool = false) -> ComponentUse? {
        switch node.kind {
        case .scalar(let name, _):
            guard !name.isEmpty else {
                diagnostics.error("expected \(what == "operator" ? "an" : "a") \(what) here", at: node.location)
                return nil
            }
            return ComponentUse(name: name, location: node.location, parameters: nil, id: nil)
        case .sequence:
            diagnostics.error("expected \(what == "operator" ? "an" : "a") \(what), not a list", at: node.location)
            return nil
        case .mapping(let pairs):
            var id: String?
            var idLocation: SourceLocation?
            var components: [YAMLPair] = []
            var onError: YAMLPair?
            for pair in pairs {
                if allowsID, pair.key.scalar == "id" {
                    id = pair.value.scalar
                    idLocation = pair.value.location
                    continue
                }
                // Beside a component (never alone), `onError` belongs to it, as `id` does.
                if pair.key.scalar == "onError", onError == nil,
                    pairs.contains(where: { !Self.besideKeys.contains($0.key.scalar ?? "") })
                {
                    onError = pair
                    continue
                }
                components.append(pair)
            }
            guard let first = components.first else {
                diagnostics.error("expected \(what == "operator" ? "an" : "a") \(what) name here", at: node.location)
                return nil
            }
            // A second name is reported by the validator, which knows whether it is a parameter of
            // the first (`besides`).
            let besides = components.count > 1 ? components[1] : nil
            guard let name = first.key.scalar else {
                if let besides {
                    let (message, note) = Self.oneComponentPerItem(what, name: "?", besides: besides, of: first.value)
                    diagnostics.error(message, at: besides.key.location, note: note)
                }
                diagnostics.error("a component name must be a single word", at: first.key.location)
                return nil
            }
            let parameters: YAMLNode?
            if case .scalar("", .plain) = first.value.kind { parameters = nil } else { parameters = first.value }
            return ComponentUse(
                name: name, location: first.key.location, parameters: parameters, id: id, idLocation: idLocation,
                onError: onError, besides: besides)
        }
    }

    /// The error for `besides`, a second name in the item of component `name` whose parameters are
    /// `value`. When it names one of the component's parameters (`isParameter`; `shortForm` is the
    /// parameter the short form sets, if it has one) the note says how to write them together;
    /// else what a comma or a missing `- ` did.
    static func oneComponentPerItem(
        _ what: String, name: String, besides: YAMLPair, of value: YAMLNode, isParameter: Bool = false,
        shortForm: String? = nil
    ) -> (message: String, note: String?) {
        let other = besides.key.scalar ?? "?"
        let message = "one \(what) per item: found '\(name)' and '\(other)'"
        guard isParameter else {
            return (
                message,
                besides.key.commaNote ?? value.commaNote
                    ?? (what == "operator" ? "start each operator on its own line with '- '" : nil)
            )
        }
        guard let shortForm, case .scalar = value.kind else {
            return (message, "'\(other)' is a parameter of \(name): write it among \(name)'s parameters")
        }
        return (
            message,
            "'\(other)' is a parameter of \(name): write them together, \(name): { \(shortForm): "
                + "\(Self.written(value)), \(other): \(Self.written(besides.value)) }"
        )
    }

    /// A scalar as it could be written inside `{ }` (quoted unless plain); `...` for anything else.
    private static func written(_ node: YAMLNode) -> String {
        guard case .scalar(let text, let style) = node.kind else { return "..." }
        guard style != .plain else { return text }
        return "\"" + String(text.flatMap { $0 == "\"" || $0 == "\\" ? ["\\", $0] : [$0] }) + "\""
    }
}
