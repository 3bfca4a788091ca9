/// Where each node of a pipeline's graph goes, left to right: a node's column is the longest path
/// to it from a node nothing feeds, its row the order that puts it near what feeds it. Pure, so
/// the drawing (`PipelineGraph.svg`) and the tests read the same boxes.
@_spi(Host) public struct GraphLayout {
    /// A node's box, in SVG units (pixels at 100%).
    public struct Box: Equatable, Sendable {
        /// The left edge.
        public var x: Double
        /// The top edge.
        public var y: Double
        /// How wide.
        public var width: Double
        /// How tall.
        public var height: Double

        /// A box at `x`, `y` (its top left corner).
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// Whether two boxes share any area (touching edges do not count).
        public func overlaps(_ other: Box) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height
                && other.y < y + height
        }
    }

    /// The boxes, by node id.
    public private(set) var boxes: [String: Box] = [:]
    /// The column of each node.
    public private(set) var columns: [String: Int] = [:]
    /// The width of the whole drawing.
    public private(set) var width = 0.0
    /// The height of the whole drawing.
    public private(set) var height = 0.0

    static let margin = 16.0
    static let columnGap = 72.0
    static let rowGap = 20.0
    static let nodeHeight = 46.0
    /// The widest a node's box is: a longer label is cut with `…` (its whole text is the node's
    /// title and in the live view's panel), so that a chain of long expressions still fits a
    /// window at a legible size.
    static let widestBox = 280.0
    /// A character of the labels' 12 px monospace font, wide enough for most faces.
    static let characterWidth = 7.4

    /// Lays out `nodes` (ids and the longest line of text each shows) joined by `edges`.
    public init(nodes: [(id: String, text: String)], edges: [(from: String, to: String)]) {
        let ids = nodes.map(\.id)
        var incoming: [String: [String]] = [:]
        var outgoing: [String: [String]] = [:]
        for edge in edges where edge.from != edge.to {
            incoming[edge.to, default: []].append(edge.from)
            outgoing[edge.from, default: []].append(edge.to)
        }
        // Longest path from a root, in a topological order (Kahn); a cycle, which a valid
        // pipeline has not, would leave its nodes in column 0 rather than loop.
        var remaining = Dictionary(uniqueKeysWithValues: ids.map { ($0, incoming[$0]?.count ?? 0) })
        var ready = ids.filter { remaining[$0] == 0 }
        var column: [String: Int] = [:]
        while !ready.isEmpty {
            let id = ready.removeFirst()
            let here = column[id] ?? 0
            column[id] = here
            for next in outgoing[id] ?? [] {
                column[next] = max(column[next] ?? 0, here + 1)
                remaining[next, default: 1] -= 1
                if remaining[next] == 0 { ready.append(next) }
            }
        }
        for id in ids where column[id] == nil { column[id] = 0 }
        columns = column
        let lastColumn = column.values.max() ?? 0
        // Rows: file order in the first column; after that, by the mean row of what feeds a node.
        var rows: [[String]] = Array(repeating: [], count: lastColumn + 1)
        for id in ids { rows[column[id]!].append(id) }
        var rowOf: [String: Double] = [:]
        for index in rows.indices {
            if index > 0 {
                let order = Dictionary(uniqueKeysWithValues: rows[index].enumerated().map { ($1, Double($0)) })
                rows[index].sort { a, b in
                    let left = Self.mean((incoming[a] ?? []).compactMap { rowOf[$0] }) ?? order[a]!
                    let right = Self.mean((incoming[b] ?? []).compactMap { rowOf[$0] }) ?? order[b]!
                    return left == right ? order[a]! < order[b]! : left < right
                }
            }
            for (row, id) in rows[index].enumerated() { rowOf[id] = Double(row) }
        }
        let text = Dictionary(nodes.map { ($0.id, $0.text) }, uniquingKeysWith: { first, _ in first })
        func boxWidth(_ id: String) -> Double {
            min(Self.widestBox, max(110, Double(text[id]?.count ?? 0) * Self.characterWidth + 24))
        }
        let tallest = rows.map { Double($0.count) * (Self.nodeHeight + Self.rowGap) - Self.rowGap }.max() ?? 0
        var x = Self.margin
        for row in rows {
            let columnWidth = row.map(boxWidth).max() ?? 0
            let used = Double(row.count) * (Self.nodeHeight + Self.rowGap) - Self.rowGap
            var y = Self.margin + (tallest - used) / 2
            for id in row {
                boxes[id] = Box(x: x, y: y, width: boxWidth(id), height: Self.nodeHeight)
                y += Self.nodeHeight + Self.rowGap
            }
            x += columnWidth + Self.columnGap
        }
        width = x - Self.columnGap + Self.margin
        height = tallest + 2 * Self.margin
    }

    /// The curve of an edge from the right side of `from` to the left side of `to`, as SVG path
    /// data, and the point where its label goes.
    public func path(from: String, to: String) -> (data: String, labelX: Double, labelY: Double)? {
        guard let start = boxes[from], let end = boxes[to] else { return nil }
        let (x1, y1) = (start.x + start.width, start.y + start.height / 2)
        let (x2, y2) = (end.x, end.y + end.height / 2)
        let bend = max(24, (x2 - x1) / 2)
        let data =
            "M\(Self.number(x1)),\(Self.number(y1)) C\(Self.number(x1 + bend)),\(Self.number(y1)) "
            + "\(Self.number(x2 - bend)),\(Self.number(y2)) \(Self.number(x2)),\(Self.number(y2))"
        return (data, (x1 + x2) / 2, (y1 + y2) / 2 - 6)
    }

    static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    /// `12`, `12.5`: short numbers for SVG attributes.
    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
