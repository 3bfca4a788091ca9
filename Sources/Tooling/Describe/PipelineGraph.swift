@_spi(Host) import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// A checked pipeline drawn as a graph: each stream's source and operators in a chain, edges
/// for streams read by other streams, dashed edges for side streams, and the sinks.
@_spi(Host) public struct PipelineGraph {
    struct Node {
        let id: String
        let label: String
        /// Where the component is in the file, as meters name it (`ops.2`, `streams.typed.source`, `sinks.1`).
        let place: String
        /// The component's name (`debounce`).
        let component: String
        /// Its parameters as written, in YAML's flow style, and where it is in the file.
        var parameters = ""
        var location: SourceLocation?
        /// The operators of its inner chain (`partitionBy`'s, `groupBy`'s `ops`), labelled.
        var inner: [String] = []
        /// What one run of its inner chain is called in the text (`each partition`).
        var innerRun = ""
        /// The key it is split by over the cores in a real run by default (an `aggregate` by key).
        var splitBy: String?
    }

    /// What the live view shows of a node: its place, component, label, parameters as written
    /// (secrets are the caller's to mask) and location.
    public struct NodeDetail: Sendable {
        /// Where it is in the file, as meters name it.
        public let place: String
        /// The component's name.
        public let component: String
        /// What the drawing shows on it.
        public let label: String
        /// Its parameters as written, in YAML's flow style.
        public let parameters: String
        /// `file:line:col`.
        public let location: String
    }

    /// Every node's detail, in file order.
    public var details: [NodeDetail] {
        nodes.map {
            NodeDetail(
                place: $0.place, component: $0.component, label: $0.label, parameters: $0.parameters,
                location: $0.location.map { "\($0)" } ?? "")
        }
    }

    struct Edge {
        let from: String
        let to: String
        let label: String?
        let dashed: Bool
    }

    var nodes: [Node] = []
    var edges: [Edge] = []
    var chains: [(stream: String, nodes: [String])] = []

    /// The graph of `pipeline`.
    public init(_ pipeline: ValidatedPipeline) {
        var tail: [String: String] = [:]
        var operatorNode: [String: String] = [:]
        func sinkNode(_ index: Int, _ sink: (stream: String, component: ValidatedComponent)) -> String {
            Self.identifier("sink_\(index)_\(sink.component.spec.name)")
        }
        // Sinks offer side streams too (`errors`), which streams may read.
        for (index, sink) in pipeline.sinks.enumerated() {
            operatorNode["\(sink.0)#\(Validator.sinkIndex(index))"] = sinkNode(index, sink)
        }
        // What the compiler's plan splits by key over the cores in a run that watches no operator
        // one by one and keeps no state.
        let splitKeys = KeyedSplit.keys(pipeline)
        for stream in pipeline.streams {
            var chain: [String] = []
            var previous: String?
            switch stream.origin {
            case .component(let component):
                let id = Self.identifier("\(stream.name)_source")
                nodes.append(
                    Self.node(id, component, place: RunMeters.place(pipeline, stream: stream.name, "source")))
                operatorNode["\(stream.name)#\(Validator.sourceIndex)"] = id
                chain.append(id)
                previous = id
            case .stream(let name):
                previous = tail[name] ?? operatorNode[name]
            }
            for (index, component) in stream.operators.enumerated() {
                let id = Self.identifier("\(stream.name)_\(index)_\(component.spec.name)")
                var node = Self.node(
                    id, component, place: RunMeters.place(pipeline, stream: stream.name, "ops.\(index)"))
                node.splitBy = splitKeys[component.use.location]?.source
                nodes.append(node)
                operatorNode["\(stream.name)#\(index)"] = id
                if let previous {
                    edges.append(Edge(from: previous, to: id, label: chain.isEmpty ? stream.name : nil, dashed: false))
                }
                chain.append(id)
                previous = id
                edges += Self.referenceEdges(of: component, to: id, pipeline, tail: tail, operatorNode: operatorNode)
            }
            if let previous { tail[stream.name] = previous }
            chains.append((stream.name, chain))
        }
        for (index, sink) in pipeline.sinks.enumerated() {
            let id = sinkNode(index, sink)
            nodes.append(Self.node(id, sink.component, place: RunMeters.sinkPlace(pipeline, index: index)))
            if let source = tail[sink.stream] {
                edges.append(
                    Edge(from: source, to: id, label: pipeline.spec.form == .graph ? sink.stream : nil, dashed: false))
            } else if let side = pipeline.sideStreams[sink.stream],
                let source = operatorNode["\(side.stream)#\(side.operatorIndex)"]
            {
                edges.append(Edge(from: source, to: id, label: side.side, dashed: true))
            }
        }
    }

    /// The edges from the streams an operator's parameters name (`merge: [other]`), each from
    /// the stream's last node, or dashed from the component that offers a side stream.
    private static func referenceEdges(
        of component: ValidatedComponent, to id: String, _ pipeline: ValidatedPipeline, tail: [String: String],
        operatorNode: [String: String]
    ) -> [Edge] {
        var edges: [Edge] = []
        for (_, value) in component.parameters.values.sorted(by: { $0.key < $1.key }) {
            for reference in streamReferences(value) {
                if let source = tail[reference] {
                    edges.append(Edge(from: source, to: id, label: reference, dashed: false))
                } else if let side = pipeline.sideStreams[reference],
                    let source = operatorNode["\(side.stream)#\(side.operatorIndex)"]
                {
                    edges.append(Edge(from: source, to: id, label: side.side, dashed: true))
                }
            }
        }
        return edges
    }

    static func node(_ id: String, _ component: ValidatedComponent, place: String) -> Node {
        var node = Node(id: id, label: label(component), place: place, component: component.spec.name)
        node.parameters = component.use.parameters.map(compact) ?? ""
        node.location = component.use.location
        if let chain = component.parameters.values.values.lazy.compactMap({ $0 as? ParameterValues.OperatorChain })
            .first
        {
            node.inner = chain.operators.map(label)
            node.innerRun = component.spec.traits.innerRun
        }
        return node
    }

    /// A node written back in YAML's flow style: `{title: .headline.main, url: .web_url}`.
    static func compact(_ node: YAMLNode) -> String {
        switch node.kind {
        case .scalar(let text, let style): return style == .quoted ? "\"\(text)\"" : text
        case .sequence(let items): return "[" + items.map(compact).joined(separator: ", ") + "]"
        case .mapping(let pairs):
            return "{" + pairs.map { "\($0.key.scalar ?? "?"): \(compact($0.value))" }.joined(separator: ", ") + "}"
        }
    }

    static func streamReferences(_ value: Any) -> [String] {
        switch value {
        case let stream as StreamName: return [stream.name]
        case let list as [Any]: return list.flatMap(streamReferences)
        default: return []
        }
    }

    static func identifier(_ text: String) -> String {
        String(text.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }

    /// `debounce 500ms`, `filter len(.) >= 3`, `flatMapLatest nyt.search`.
    static func label(_ component: ValidatedComponent) -> String {
        guard let node = component.use.parameters, node.pairs?.isEmpty != true else { return component.spec.name }
        var detail: String
        switch node.kind {
        case .scalar(let text, _): detail = text
        case .mapping(let pairs) where pairs.count == 1 && component.spec.parameter(pairs[0].key.scalar ?? "") == nil:
            detail = pairs[0].key.scalar ?? ""
        default: detail = compact(node)
        }
        // Masked before it is cut: a secret cut short would no longer be recognised.
        detail = Secrets.shared.redact(detail.replacingOccurrences(of: "\n", with: " "))
        if detail.count > 48 { detail = String(detail.prefix(45)) + "..." }
        return "\(component.spec.name) \(detail)"
    }

    /// One block a stream: its source, each operator (with the streams it reads), then its sinks.
    public func text() -> String {
        var lines: [String] = []
        let labels = Dictionary(nodes.map { ($0.id, $0.label) }, uniquingKeysWith: { a, _ in a })
        let chainOf = Dictionary(
            chains.flatMap { chain in chain.nodes.map { ($0, chain.stream) } }, uniquingKeysWith: { a, _ in a })
        for chain in chains {
            lines.append("stream \(chain.stream)")
            if let first = chain.nodes.first,
                let origin = edges.first(where: { $0.to == first && chainOf[$0.from] != chain.stream })
            {
                lines.append("    from stream \(chainOf[origin.from] ?? origin.from)")
            }
            for (index, id) in chain.nodes.enumerated() {
                lines.append("  \(index == 0 ? "  " : "→ ")\(labels[id] ?? id)")
                if let node = nodes.first(where: { $0.id == id }), !node.inner.isEmpty {
                    lines.append("      \(node.innerRun): " + node.inner.joined(separator: " → "))
                }
                if let node = nodes.first(where: { $0.id == id }), let key = node.splitBy {
                    lines.append(
                        "      split by \(key): \(BuiltinComponents.defaultPartitions) partitions on every core when run "
                            + "(one thread with parallel: 1 or --state)")
                }
                for edge in edges
                where edge.to == id && chainOf[edge.from] != chain.stream && edge.label != nil
                    && edge.label != chain.stream
                {
                    lines.append(
                        "      reads \(edge.dashed ? "\(chainOf[edge.from] ?? "?").\(edge.label!)" : edge.label!)")
                }
            }
            for edge in edges where chainOf[edge.from] == chain.stream && chainOf[edge.to] == nil {
                let side = edge.dashed ? " (\(edge.label ?? ""))" : ""
                lines.append("  ⇒ \(labels[edge.to] ?? edge.to)\(side)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Graphviz DOT.
    public func dot() -> String {
        var lines = ["digraph pipeline {", "  rankdir=LR;", "  node [shape=box, fontname=\"Helvetica\"];"]
        for node in nodes { lines.append("  \(node.id) [label=\"\(Self.escape(node.label))\"];") }
        for edge in edges {
            var attributes: [String] = []
            if let label = edge.label { attributes.append("label=\"\(Self.escape(label))\"") }
            if edge.dashed { attributes.append("style=dashed") }
            lines.append(
                "  \(edge.from) -> \(edge.to)\(attributes.isEmpty ? "" : " [\(attributes.joined(separator: ", "))]");")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A Mermaid flowchart.
    public func mermaid() -> String {
        var lines = ["flowchart LR"]
        for node in nodes {
            lines.append(
                "  \(node.id)[\"\(Self.escape(node.label).replacingOccurrences(of: "\\\"", with: "#quot;"))\"]")
        }
        for edge in edges {
            let arrow = edge.dashed ? "-.->" : "-->"
            if let label = edge.label {
                lines.append("  \(edge.from) \(arrow)|\(label)| \(edge.to)")
            } else {
                lines.append("  \(edge.from) \(arrow) \(edge.to)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        return self.replacing(target, with: replacement)
    }
}
