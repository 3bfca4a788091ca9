extension PipelineGraph {
    /// The graph drawn as SVG, left to right, with nothing outside the file (no font, no
    /// script): each node a group with its component, its label and its place in the file
    /// (`data-place`, which the live view matches to the run's meters); each edge a curve with an
    /// arrow, its label, and an empty rate text the live view fills in. Light and dark colour
    /// schemes both read.
    public func svg(title: String) -> String {
        let layout = self.layout
        let width = GraphLayout.number(layout.width)
        let height = GraphLayout.number(layout.height)
        var lines = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pipeline-graph\" viewBox=\"0 0 \(width) \(height)\" "
                + "width=\"\(width)\" height=\"\(height)\" role=\"img\" aria-label=\"\(Self.xml("pipeline \(title)"))\">",
            "<title>\(Self.xml(title))</title>",
            "<style>",
            Self.style,
            "</style>",
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
                + "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" class=\"arrow\"/></marker></defs>",
            "<g class=\"edges\">",
        ]
        let places = Dictionary(nodes.map { ($0.id, $0.place) }, uniquingKeysWith: { first, _ in first })
        for (index, edge) in edges.enumerated() {
            guard let path = layout.path(from: edge.from, to: edge.to) else { continue }
            let kind = edge.dashed ? "edge side" : "edge"
            lines.append(
                "<g class=\"\(kind)\" id=\"edge-\(index)\" data-from=\"\(Self.xml(places[edge.from] ?? ""))\" "
                    + "data-to=\"\(Self.xml(places[edge.to] ?? ""))\">"
                    + "<path d=\"\(path.data)\" marker-end=\"url(#arrow)\"/>"
                    + "<text class=\"edge-label\" x=\"\(GraphLayout.number(path.labelX))\" "
                    + "y=\"\(GraphLayout.number(path.labelY))\" text-anchor=\"middle\">"
                    + "<tspan class=\"stream\">\(Self.xml(edge.label ?? ""))</tspan></text>"
                    // The rate on a line of its own under the label: filled in, it never covers it.
                    + "<text class=\"edge-label\" x=\"\(GraphLayout.number(path.labelX))\" "
                    + "y=\"\(GraphLayout.number(path.labelY + 20))\" text-anchor=\"middle\">"
                    + "<tspan class=\"rate\"></tspan></text></g>")
        }
        lines.append("</g>")
        lines.append("<g class=\"nodes\">")
        for node in nodes {
            guard let box = layout.boxes[node.id] else { continue }
            let shown = Self.fitted(node.label, width: box.width)
            lines.append(
                "<g class=\"node\" id=\"node-\(node.id)\" data-place=\"\(Self.xml(node.place))\" "
                    + "data-component=\"\(Self.xml(node.component))\" tabindex=\"0\" "
                    + "transform=\"translate(\(GraphLayout.number(box.x)),\(GraphLayout.number(box.y)))\">"
                    + "<title>\(Self.xml(node.label)) (\(Self.xml(node.place)))</title>"
                    + "<rect width=\"\(GraphLayout.number(box.width))\" height=\"\(GraphLayout.number(box.height))\" rx=\"6\"/>"
                    + "<text class=\"label\" x=\"12\" y=\"19\">\(Self.xml(shown))</text>"
                    + "<text class=\"place\" x=\"12\" y=\"36\">\(Self.xml(node.place))</text></g>")
        }
        lines.append("</g>")
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The layout of this graph's nodes.
    public var layout: GraphLayout {
        GraphLayout(
            nodes: nodes.map { node in
                (
                    node.id,
                    [Self.fitted(node.label, width: GraphLayout.widestBox), node.place].max { $0.count < $1.count }!
                )
            },
            edges: edges.map { ($0.from, $0.to) })
    }

    /// The nodes' places, by id (for tests and the live view).
    public var places: [String: String] {
        Dictionary(nodes.map { ($0.id, $0.place) }, uniquingKeysWith: { first, _ in first })
    }

    /// `text` shortened with `…` to what fits a box `width` wide.
    static func fitted(_ text: String, width: Double) -> String {
        let fits = max(4, Int((width - 24) / GraphLayout.characterWidth))
        return text.count <= fits ? text : String(text.prefix(fits - 1)) + "…"
    }

    /// `text` escaped for XML text and attributes.
    static func xml(_ text: String) -> String { XMLText.escape(text) }

    static let style = """
        .pipeline-graph { font: 12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
        .node rect { fill: #f6f8fa; stroke: #57606a; stroke-width: 1.2; }
        .node .label { fill: #1f2328; }
        .node .place { fill: #656d76; font-size: 11px; }
        .node:focus rect, .node.selected rect { stroke: #0969da; stroke-width: 2.4; }
        .node.error rect { fill: #ffebe9; stroke: #cf222e; stroke-width: 2; }
        .node.stalled rect { stroke-dasharray: 5 3; stroke: #9a6700; }
        .edge path { fill: none; stroke: #57606a; stroke-width: 1.4; }
        .edge.side path { stroke-dasharray: 6 4; }
        .arrow { fill: #57606a; }
        .edge-label { fill: #656d76; font-size: 11px; }
        .edge-label .rate { fill: #0969da; font-weight: bold; }
        @media (prefers-color-scheme: dark) {
          .node rect { fill: #161b22; stroke: #8b949e; }
          .node .label { fill: #e6edf3; }
          .node .place, .edge-label { fill: #8b949e; }
          .edge path { stroke: #8b949e; }
          .arrow { fill: #8b949e; }
          .node.error rect { fill: #3c1618; stroke: #f85149; }
          .edge-label .rate { fill: #58a6ff; }
        }
        """
}
