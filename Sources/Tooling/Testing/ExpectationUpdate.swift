@_spi(Host) import Pipeline

/// `rivulet test --update`: a test file's text with the `expect` lists of failed cases replaced by
/// what the pipeline produced, the rest of the file (comments, layout) left as it was.
@_spi(Host) public enum ExpectationUpdate {
    /// `text` with the text of each node replaced by its events, written in the node's style (a
    /// flow list on one line, or a block list at the node's indentation, its entries flow
    /// mappings or, as the file's first entry is, block mappings).
    public static func apply(_ replacements: [(node: YAMLNode, events: [PipelineTestFile.TimedEvent])], to text: String)
        -> String
    {
        var scalars = Array(text.unicodeScalars)
        let lineStarts = [0] + scalars.indices.filter { scalars[$0] == "\n" }.map { $0 + 1 }
        func offset(_ location: SourceLocation) -> Int {
            let line = min(max(location.line, 1), lineStarts.count) - 1
            return min(lineStarts[line] + location.column - 1, scalars.count)
        }
        // From the end, so earlier offsets stay true.
        for (node, events) in replacements.sorted(by: { offset($0.node.location) > offset($1.node.location) }) {
            let start = offset(node.location)
            let end = offset(node.end)
            let items = events.map(entry)
            let written: String
            if node.isFlowStyle || items.isEmpty {
                written = "[" + items.joined(separator: ", ") + "]"
            } else {
                let indent = String(repeating: " ", count: node.location.column - 1)
                if let first = node.items?.first, first.pairs != nil, !first.isFlowStyle {
                    written = events.map { "- " + blockEntry($0, indent: indent + "  ") }.joined(
                        separator: "\n" + indent)
                } else {
                    written = items.map { "- " + $0 }.joined(separator: "\n" + indent)
                }
            }
            scalars.replaceSubrange(start..<end, with: Array(written.unicodeScalars))
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars)
        return String(result)
    }

    /// One timeline entry as a flow mapping: `{ at: 10ms, next: {"id": 1} }`.
    static func entry(_ event: PipelineTestFile.TimedEvent) -> String {
        let time = PipelineTestFile.format(microseconds: event.microseconds)
        switch event.kind {
        case .next(let value): return "{ at: \(time), next: \(flow(value)) }"
        case .error(let message): return "{ at: \(time), error: \(flow(.string(message))) }"
        case .complete: return "{ at: \(time), complete: true }"
        }
    }

    /// One timeline entry as a block mapping, its later lines at `indent`.
    static func blockEntry(_ event: PipelineTestFile.TimedEvent, indent: String) -> String {
        let time = "at: " + PipelineTestFile.format(microseconds: event.microseconds)
        switch event.kind {
        case .next(let value): return time + "\n" + indent + "next: " + flow(value)
        case .error(let message): return time + "\n" + indent + "error: " + flow(.string(message))
        case .complete: return time + "\n" + indent + "complete: true"
        }
    }

    /// A value as YAML flow text that reads back as the same value: JSON, spaced as YAML wants.
    static func flow(_ value: Value) -> String {
        switch value {
        case .array(let items): return "[" + items.map(flow).joined(separator: ", ") + "]"
        case .object(let object):
            return "{" + object.map { key, item in json(.string(key)) + ": " + flow(item) }.joined(separator: ", ")
                + "}"
        default: return json(value)
        }
    }

    private static func json(_ value: Value) -> String {
        var bytes: [UInt8] = []
        JSONSerializer.write(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
