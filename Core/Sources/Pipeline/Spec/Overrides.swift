/// `--set key=value`: replaces (or adds) one value in the YAML document before it is checked, by a
/// dotted path of mapping keys and list indexes: `ops.1.debounce=300ms`, `source.events.0.next=hi`.
/// Keys that are not in the file are created (`source.http.retry.max=1`). A value that starts with
/// `{`, `[` or a quote is read as YAML (`source={stdin: jsonl}`); any other is a plain string.
@_spi(Host) public struct Override: @unchecked Sendable {
    /// The path's parts.
    public let path: [String]
    /// The value as written after `=`.
    public let value: String
    /// A whole node to put in place instead of a scalar (tests replacing a source).
    public let node: YAMLNode?

    /// Replaces the node at `path` with `node`.
    public init(path: [String], node: YAMLNode) {
        self.path = path
        self.value = ""
        self.node = node
    }

    /// Reads `key=value`; nil when there is no `=` or no key.
    public init?(_ text: String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { return nil }
        path = text[..<equals].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        value = String(text[text.index(after: equals)...])
        node = nil
        if path.contains(where: \.isEmpty) { return nil }
    }

    /// The document with the value replaced, or an error saying which part of the path is wrong.
    public func apply(to root: YAMLNode?) throws(Diagnostic) -> YAMLNode {
        let start = SourceLocation(file: "--set", line: 1, column: 1)
        guard let root else { throw .error("cannot set '\(path.joined(separator: "."))' in an empty file", at: start) }
        return try replace(in: root, at: path[...])
    }

    private func replace(in node: YAMLNode, at path: ArraySlice<String>) throws(Diagnostic) -> YAMLNode {
        guard let key = path.first else {
            if let replacement = self.node { return replacement }
            return try valueNode(at: node.location)
        }
        let rest = path.dropFirst()
        switch node.kind {
        case .mapping(var pairs):
            if let index = pairs.firstIndex(where: { $0.key.scalar == key }) {
                pairs[index] = YAMLPair(key: pairs[index].key, value: try replace(in: pairs[index].value, at: rest))
            } else {
                // A key the file does not have: made, with the mappings on its way.
                let empty = YAMLNode(kind: .mapping([]), location: node.location)
                pairs.append(
                    YAMLPair(
                        key: YAMLNode(kind: .scalar(key, .plain), location: node.location),
                        value: try replace(in: empty, at: rest)))
            }
            return YAMLNode(kind: .mapping(pairs), location: node.location)
        case .sequence(var items):
            guard let index = Int(key), items.indices.contains(index) else {
                throw .error(
                    "--set \(self.path.joined(separator: ".")): '\(key)' is not an index of this list (0 to \(items.count - 1))",
                    at: node.location)
            }
            items[index] = try replace(in: items[index], at: rest)
            return YAMLNode(kind: .sequence(items), location: node.location)
        case .scalar:
            guard rest.isEmpty else {
                throw .error(
                    "--set \(self.path.joined(separator: ".")): '\(key)' is inside a single value", at: node.location)
            }
            // `debounce: 500ms` with `ops.1.debounce.dueTime=300ms`: the short form becomes parameters.
            return YAMLNode(
                kind: .mapping([
                    YAMLPair(
                        key: YAMLNode(kind: .scalar(key, .plain), location: node.location),
                        value: try valueNode(at: node.location))
                ]), location: node.location)
        }
    }

    /// The value as a node: YAML when it starts with `{`, `[` or a quote (its errors located in
    /// `--set`), else a plain scalar standing where the value it replaces stood.
    private func valueNode(at location: SourceLocation) throws(Diagnostic) -> YAMLNode {
        guard let first = value.first, "{[\"'".contains(first) else {
            return YAMLNode(kind: .scalar(value, .plain), location: location)
        }
        do {
            return try YAMLLoader(file: "--set", environment: [:]).load(value)
                ?? YAMLNode(kind: .scalar("", .plain), location: location)
        } catch {
            let problem = error.diagnostics.first
            throw .error(
                "--set \(path.joined(separator: ".")): the value is not valid YAML: \(problem?.message ?? "\(error)")",
                at: problem?.location ?? SourceLocation(file: "--set", line: 1, column: 1))
        }
    }
}
