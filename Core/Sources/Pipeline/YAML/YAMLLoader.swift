import CYAML

/// Loads a YAML document through the system libyaml into `YAMLNode`s that know their place.
///
/// Anchors, aliases and merge keys (`<<: *defaults`) work. Syntax errors, duplicate keys, tabs in
/// indentation and `${VAR}` references to unset variables become located diagnostics; every one
/// found is reported.
@_spi(Host) public struct YAMLLoader {
    /// The path used in locations.
    public let file: String
    /// The variables `${VAR}` reads.
    public let environment: [String: String]

    /// A loader for `file`, substituting from `environment`.
    public init(file: String, environment: [String: String]) {
        self.file = file
        self.environment = environment
    }

    /// Parses `text`; returns nil for an empty document.
    public func load(_ text: String) throws(DiagnosticList) -> YAMLNode? {
        var collector = DiagnosticCollector()
        checkTabs(text, into: &collector)
        if collector.hasErrors { throw DiagnosticList(collector.sorted) }
        var builder = Builder(file: file, environment: environment)
        let root: YAMLNode?
        do {
            root = try builder.parse(text)
        } catch {
            throw DiagnosticList([error])
        }
        for diagnostic in builder.diagnostics.diagnostics { collector.add(diagnostic) }
        if collector.hasErrors { throw DiagnosticList(collector.sorted) }
        return root
    }

    private func checkTabs(_ text: String, into collector: inout DiagnosticCollector) {
        var inBlockScalar = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var column = 1
            for scalar in line.unicodeScalars {
                if scalar == " " {
                    column += 1
                    continue
                }
                if scalar == "\t" && !inBlockScalar {
                    collector.error(
                        "tab character in indentation; YAML indents with spaces",
                        at: SourceLocation(file: file, line: index + 1, column: column))
                }
                break
            }
            let trimmed = line.trimming { $0 == " " || $0 == "\r" }
            if trimmed.hasSuffix("|") || trimmed.hasSuffix(">") || trimmed.hasSuffix("|-") || trimmed.hasSuffix(">-") {
                inBlockScalar = true
            } else if !trimmed.isEmpty && !line.hasPrefix(" ") {
                inBlockScalar = false
            }
        }
    }
}

private struct Builder {
    let file: String
    let environment: [String: String]
    var diagnostics = DiagnosticCollector()
    var anchors: [String: YAMLNode] = [:]

    enum Frame {
        case sequence(start: SourceLocation, anchor: String?, items: [YAMLNode], flow: Bool)
        case mapping(
            start: SourceLocation, anchor: String?, pairs: [YAMLPair], pendingKey: YAMLNode?, merged: Set<String>,
            flow: Bool)
    }

    var stack: [Frame] = []
    var root: YAMLNode?
    var documents = 0

    init(file: String, environment: [String: String]) {
        self.file = file
        self.environment = environment
    }

    func location(_ mark: yaml_mark_t) -> SourceLocation {
        SourceLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let pointer else { return nil }
        return String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
    }

    /// The deepest nesting of lists and mappings a file may have.
    static let maximumDepth = 64

    mutating func parse(_ text: String) throws(Diagnostic) -> YAMLNode? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw .error("could not start the YAML parser", at: SourceLocation(file: file, line: 1, column: 1))
        }
        defer { yaml_parser_delete(&parser) }
        var bytes = Array(text.utf8)
        let result: Result<YAMLNode?, Diagnostic> = bytes.withUnsafeMutableBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    return .failure(syntaxError(parser))
                }
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return .success(root)
                case YAML_DOCUMENT_START_EVENT:
                    documents += 1
                    if documents > 1 {
                        return .failure(
                            .error(
                                "a pipeline file holds one YAML document; found a second '---'",
                                at: location(event.start_mark)))
                    }
                case YAML_SCALAR_EVENT:
                    let scalar = event.data.scalar
                    let raw = String(
                        decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                    let style: YAMLNode.ScalarStyle
                    var contentOffset = 0
                    switch scalar.style {
                    case YAML_SINGLE_QUOTED_SCALAR_STYLE, YAML_DOUBLE_QUOTED_SCALAR_STYLE:
                        style = .quoted
                        contentOffset = 1
                    case YAML_LITERAL_SCALAR_STYLE, YAML_FOLDED_SCALAR_STYLE: style = .block
                    default: style = .plain
                    }
                    let start = location(event.start_mark)
                    let content = start.advanced(by: contentOffset)
                    let text = substitute(raw, at: content)
                    let node = YAMLNode(kind: .scalar(text, style), location: start, contentLocation: content)
                    node.writtenEnd = location(event.end_mark)
                    if let anchor = Self.string(scalar.anchor) { anchors[anchor] = node }
                    add(node)
                case YAML_ALIAS_EVENT:
                    let name = Self.string(event.data.alias.anchor) ?? ""
                    guard let node = anchors[name] else {
                        return .failure(.error("unknown alias '*\(name)'", at: location(event.start_mark)))
                    }
                    add(node)
                case YAML_SEQUENCE_START_EVENT where stack.count >= Self.maximumDepth,
                    YAML_MAPPING_START_EVENT where stack.count >= Self.maximumDepth:
                    // Later steps walk the tree recursively; a bound keeps a hostile file from
                    // overflowing the stack.
                    return .failure(
                        .error(
                            "the file nests lists and mappings more than \(Self.maximumDepth) levels deep",
                            at: location(event.start_mark)))
                case YAML_SEQUENCE_START_EVENT:
                    stack.append(
                        .sequence(
                            start: location(event.start_mark), anchor: Self.string(event.data.sequence_start.anchor),
                            items: [], flow: event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE))
                case YAML_MAPPING_START_EVENT:
                    stack.append(
                        .mapping(
                            start: location(event.start_mark), anchor: Self.string(event.data.mapping_start.anchor),
                            pairs: [], pendingKey: nil, merged: [],
                            flow: event.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE))
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    let node: YAMLNode
                    let anchor: String?
                    switch stack.removeLast() {
                    case .sequence(let start, let name, let items, let flow):
                        node = YAMLNode(kind: .sequence(items), location: start)
                        node.isFlow = flow
                        anchor = name
                    case .mapping(let start, let name, let pairs, _, _, let flow):
                        node = YAMLNode(kind: .mapping(pairs), location: start)
                        node.isFlow = flow
                        anchor = name
                    }
                    // A block collection's end mark is where the next token starts; its own end
                    // is its last item's.
                    if node.isFlow { node.writtenEnd = location(event.end_mark) }
                    if let anchor { anchors[anchor] = node }
                    add(node)
                default:
                    break
                }
            }
        }
        return try result.get()
    }

    func syntaxError(_ parser: yaml_parser_t) -> Diagnostic {
        let problem = parser.problem.map { String(cString: $0) } ?? "invalid YAML"
        let context = parser.context.map { String(cString: $0) }
        var message = problem
        if let context { message += " (\(context))" }
        var note: String?
        if problem.contains("mapping values are not allowed") {
            note = "a value containing ': ' must be quoted, or a key is indented wrongly"
        } else if problem.contains("did not find expected key") || problem.contains("did not find expected '-'") {
            note = "check the indentation of this line against the lines above it"
        }
        return .error(message, at: location(parser.problem_mark), note: note)
    }

    mutating func add(_ node: YAMLNode) {
        guard var frame = stack.popLast() else {
            root = node
            return
        }
        switch frame {
        case .sequence(_, _, _, true), .mapping(_, _, _, _, _, true): node.isInFlow = true
        default: break
        }
        switch frame {
        case .sequence(let start, let anchor, var items, let flow):
            // The frame lets go of its list first, so that the append does not copy it (20,000
            // items took seconds).
            frame = .sequence(start: start, anchor: anchor, items: [], flow: flow)
            items.append(node)
            frame = .sequence(start: start, anchor: anchor, items: items, flow: flow)
        case .mapping(let start, let anchor, var pairs, let pendingKey, var merged, let flow):
            frame = .mapping(start: start, anchor: anchor, pairs: [], pendingKey: nil, merged: [], flow: flow)
            if let key = pendingKey {
                if key.scalar == "<<", case .plain = scalarStyle(key) {
                    merged.formUnion(merge(node, into: &pairs))
                } else if let keyText = key.scalar, merged.contains(keyText) {
                    // A key written out overrides the one a merge brought in.
                    pairs.removeAll { $0.key.scalar == keyText }
                    merged.remove(keyText)
                    pairs.append(YAMLPair(key: key, value: node))
                } else {
                    if let keyText = key.scalar, let first = pairs.first(where: { $0.key.scalar == keyText }) {
                        diagnostics.error(
                            "duplicate key '\(keyText)' (first at line \(first.key.location.line))", at: key.location)
                    }
                    pairs.append(YAMLPair(key: key, value: node))
                }
                frame = .mapping(
                    start: start, anchor: anchor, pairs: pairs, pendingKey: nil, merged: merged, flow: flow)
            } else {
                frame = .mapping(
                    start: start, anchor: anchor, pairs: pairs, pendingKey: node, merged: merged, flow: flow)
            }
        }
        stack.append(frame)
    }

    func scalarStyle(_ node: YAMLNode) -> YAMLNode.ScalarStyle? {
        if case .scalar(_, let style) = node.kind { return style }
        return nil
    }

    /// `<<: *defaults` (or a list of them) copies the keys not already present.
    mutating func merge(_ node: YAMLNode, into pairs: inout [YAMLPair]) -> Set<String> {
        var added = Set<String>()
        let sources = node.items ?? [node]
        for source in sources {
            guard let merged = source.pairs else {
                diagnostics.error("'<<' merges a mapping, but this is \(source.kindName)", at: source.location)
                continue
            }
            for pair in merged where !pairs.contains(where: { $0.key.scalar == pair.key.scalar }) {
                pairs.append(pair)
                if let key = pair.key.scalar { added.insert(key) }
            }
        }
        return added
    }

    /// The value of one `${…}` (its `body`: `VAR`, `VAR:-default` or `VAR:?message`); an unset
    /// variable without a default is reported at `location` and gives nothing.
    private mutating func variable(_ body: String, at location: SourceLocation) -> String {
        let name: String
        var fallback: String?
        var required: String?
        if let range = body.firstRange(of: ":-") {
            name = String(body[..<range.lowerBound])
            fallback = String(body[range.upperBound...])
        } else if let range = body.firstRange(of: ":?") {
            // `${VAR:?message}`, as in the shell: the file's own message when VAR is unset or empty.
            name = String(body[..<range.lowerBound])
            required = String(body[range.upperBound...])
        } else {
            name = body
        }
        if let value = environment[name], !(value.isEmpty && (fallback != nil || required != nil)) { return value }
        if let fallback { return fallback }
        if let required {
            diagnostics.error(
                required.isEmpty ? "environment variable '\(name)' is not set" : required, at: location,
                note: "set \(name) in the environment or in a file given with --env-file")
        } else {
            diagnostics.error(
                "environment variable '\(name)' is not set", at: location,
                note: "set it, or give a default: ${\(name):-value}")
        }
        return ""
    }

    /// Replaces `${VAR}` and `${VAR:-default}`; `$${` stands for a literal `${`.
    mutating func substitute(_ text: String, at location: SourceLocation) -> String {
        guard text.contains("${") else { return text }
        var result = ""
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var line = location.line
        var column = location.column
        while index < scalars.count {
            if scalars[index] == "$" && index + 2 < scalars.count && scalars[index + 1] == "$"
                && scalars[index + 2] == "{"
            {
                result += "${"
                index += 3
                column += 3
                continue
            }
            if scalars[index] == "$" && index + 1 < scalars.count && scalars[index + 1] == "{" {
                var end = index + 2
                while end < scalars.count && scalars[end] != "}" { end += 1 }
                guard end < scalars.count else {
                    diagnostics.error(
                        "unterminated '${' in a value", at: SourceLocation(file: file, line: line, column: column))
                    result.unicodeScalars.append(contentsOf: scalars[index...])
                    break
                }
                let body = String(String.UnicodeScalarView(scalars[(index + 2)..<end]))
                result += variable(body, at: SourceLocation(file: file, line: line, column: column))
                column += end + 1 - index
                index = end + 1
                continue
            }
            if scalars[index] == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
            result.unicodeScalars.append(scalars[index])
            index += 1
        }
        return result
    }
}
