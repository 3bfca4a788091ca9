@_spi(Host) @_spi(Components) import Pipeline

/// `rivulet test --update`: a test file's text with the `expect` lists of failed cases replaced by
/// what the pipeline produced, the rest of the file (comments, layout) left as it was.
@_spi(Host) public enum ExpectationUpdate {
    /// `text` with the text of each node replaced by its events as a block list, an event a line:
    /// at the node's indentation (a flow list's go under its key), its entries flow mappings or,
    /// as the file's first entry is, block mappings.
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
            var start = offset(node.location)
            let end = offset(node.end)
            // A flow list made a block list leaves no space after its key's colon.
            if node.isFlowStyle && !events.isEmpty {
                while start > 0 && scalars[start - 1] == " " { start -= 1 }
            }
            let items = events.map(entry)
            let written: String
            if items.isEmpty {
                written = "[]"
            } else if node.isFlowStyle {
                // A flow list becomes a block list, an event a line, under its key: one line of
                // many events is hard to read and to review in a diff.
                let line = lineStarts[min(max(node.location.line, 1), lineStarts.count) - 1]
                // The key's column: past the line's spaces and any `- ` that opens an item before it.
                var keyIndent = 0
                while line + keyIndent < scalars.count {
                    let scalar = scalars[line + keyIndent]
                    let opensItem =
                        scalar == "-" && line + keyIndent + 1 < scalars.count && scalars[line + keyIndent + 1] == " "
                    guard scalar == " " || opensItem else { break }
                    keyIndent += opensItem ? 2 : 1
                }
                let indent = String(repeating: " ", count: keyIndent + 2)
                written = "\n" + items.map { indent + "- " + $0 }.joined(separator: "\n")
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
