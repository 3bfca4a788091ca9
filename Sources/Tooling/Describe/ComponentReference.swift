@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// The reference documentation of components, generated from their specs: the text of
/// `rivulet components` and the Markdown of docs/components.md.
@_spi(Host) public struct ComponentReference {
    let registry: ComponentRegistry

    /// A reference over `registry`.
    public init(registry: ComponentRegistry) {
        self.registry = registry
    }

    static func render(_ value: Value?) -> String {
        guard let value else { return "" }
        if case .string(let text) = value { return text }
        return value.description
    }

    /// Every component, a line each, grouped by kind.
    public func textList() -> String {
        var lines: [String] = []
        for kind in ComponentKind.allCases {
            let specs = registry.all.filter { $0.kind == kind }
            guard !specs.isEmpty else { continue }
            lines.append(kind == .operator ? "Operators" : (kind == .source ? "Sources" : "Sinks"))
            let width = specs.map(\.name.count).max() ?? 0
            for spec in specs {
                let origin =
                    registry.origin(of: spec.name, kind: spec.kind).map { $0 == "rivulet" ? "" : "  [\($0)]" } ?? ""
                lines.append("  \(spec.name.padding(to: width))  \(spec.summary)\(origin)")
            }
            lines.append("")
        }
        lines.append("'rivulet components NAME' describes one.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// One component in full: summary, docs, parameters, side streams, example.
    public func text(_ spec: ComponentSpec) -> String {
        var lines = ["\(spec.name) (\(spec.kind.rawValue))", "  \(spec.summary)"]
        if !spec.docs.isEmpty { lines += ["", wrap(spec.docs, indent: "  ")] }
        lines.append("")
        if spec.parameters.isEmpty {
            lines.append("Parameters: none")
        } else {
            lines.append("Parameters:")
            for (name, parameter) in Self.flattened(spec.parameters) {
                var head = "  \(name) (\(parameter.type))"
                if parameter.required { head += ", required" }
                if let defaultValue = parameter.defaultValue { head += ", default \(Self.render(defaultValue))" }
                if name == spec.primary { head += ", short form" }
                lines.append(head)
                lines.append(wrap(parameter.doc, indent: "      "))
                if let example = parameter.example { lines.append("      e.g. \(parameter.name): \(example)") }
            }
        }
        if !spec.sideStreams.isEmpty {
            lines += ["", "Side streams: " + spec.sideStreams.map { "NAME.\($0)" }.joined(separator: ", ")]
        }
        if let delivery = spec.delivery { lines += ["", wrap("Delivery: \(delivery.summary)", indent: "")] }
        if let clock = Self.clock(of: spec) { lines += ["", wrap("Clock: \(clock)", indent: "")] }
        lines += ["", wrap("Checkpoints (run --state): \(spec.checkpointing.summary)", indent: "")]
        lines +=
            ["", "Example:"] + spec.example.split(separator: "\n", omittingEmptySubsequences: false).map { "  \($0)" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One component as a JSON object (`rivulet components --format json`): what the text shows,
    /// for editors and scripts.
    public func json(_ spec: ComponentSpec) -> Value {
        var object = JSONObject()
        object["name"] = .string(spec.name)
        object["kind"] = .string(spec.kind.rawValue)
        object["summary"] = .string(spec.summary)
        object["docs"] = .string(spec.docs)
        object["parameters"] = .array(
            Self.flattened(spec.parameters).map { name, parameter in
                var entry = JSONObject()
                entry["name"] = .string(name)
                entry["type"] = .string(parameter.type.description)
                entry["required"] = .bool(parameter.required)
                if let defaultValue = parameter.defaultValue { entry["default"] = defaultValue }
                if name == spec.primary { entry["shortForm"] = .bool(true) }
                entry["doc"] = .string(parameter.doc)
                if let example = parameter.example { entry["example"] = .string(example) }
                return .object(entry)
            })
        object["sideStreams"] = .array(spec.sideStreams.map { .string($0) })
        object["checkpoints"] = .string(spec.checkpointing.summary)
        if let delivery = spec.delivery { object["delivery"] = .string(delivery.summary) }
        object["example"] = .string(spec.example)
        return .object(object)
    }

    /// Every parameter with the parameters of its mappings after it, named by their path
    /// (`retry`, `retry.max`, ...).
    static func flattened(_ parameters: [ParameterSpec], prefix: String = "") -> [(String, ParameterSpec)] {
        parameters.flatMap { parameter -> [(String, ParameterSpec)] in
            let name = prefix + parameter.name
            guard case .object(let children) = parameter.type else { return [(name, parameter)] }
            return [(name, parameter)] + flattened(children, prefix: name + ".")
        }
    }

    /// One component as a Markdown section.
    public func markdown(_ spec: ComponentSpec) -> String {
        var lines = ["### `\(spec.name)`", "", spec.summary]
        if !spec.docs.isEmpty { lines += ["", spec.docs] }
        lines.append("")
        if !spec.parameters.isEmpty {
            lines += ["| parameter | type | default | description |", "|---|---|---|---|"]
            for (written, parameter) in Self.flattened(spec.parameters) {
                let name = "`\(written)`" + (written == spec.primary ? " (short form)" : "")
                let defaultText =
                    parameter.required ? "required" : (parameter.defaultValue.map { "`\(Self.render($0))`" } ?? "")
                lines.append(
                    "| \(name) | \(parameter.type) | \(defaultText) | \(parameter.doc.replacing("|", with: "\\|")) |")
            }
            lines.append("")
        }
        if !spec.sideStreams.isEmpty {
            lines += ["Side streams: " + spec.sideStreams.map { "`NAME.\($0)`" }.joined(separator: ", "), ""]
        }
        if let delivery = spec.delivery { lines += ["Delivery: \(delivery.summary)", ""] }
        if let clock = Self.clock(of: spec) { lines += ["Clock: \(clock)", ""] }
        lines += ["Checkpoints (`run --state`): \(spec.checkpointing.summary)", ""]
        lines += ["```yaml", spec.example, "```", ""]
        return lines.joined(separator: "\n")
    }

    /// The whole reference: every component, then the expression functions.
    public func markdownDocument() -> String {
        var text = """
            # Component reference

            Generated from the component specs by `rivulet components --format markdown`; a test fails when \
            this file is out of date. Regenerate it with `make docs`.


            """
        for kind in ComponentKind.allCases {
            let specs = registry.all.filter { $0.kind == kind }
            guard !specs.isEmpty else { continue }
            text += "## \(kind == .operator ? "Operators" : (kind == .source ? "Sources" : "Sinks"))\n\n"
            for spec in specs { text += markdown(spec) + "\n" }
        }
        text += "## Expression functions\n\n| function | what it gives |\n|---|---|\n"
        for function in ExpressionLanguage.functions {
            text += "| `\(function.signature)` | \(function.summary) |\n"
        }
        return text
    }

    func wrap(_ text: String, indent: String, width: Int = 96) -> String {
        var lines: [String] = []
        var line = indent
        for word in text.split(separator: " ") {
            if line.count + word.count + 1 > width && line.count > indent.count {
                lines.append(line)
                line = indent
            }
            line += (line.count > indent.count ? " " : "") + word
        }
        if line.count > indent.count { lines.append(line) }
        return lines.joined(separator: "\n")
    }

    /// Which clock a component's durations are on, for those that take one.
    static func clock(of spec: ComponentSpec) -> String? {
        guard spec.parameters.contains(where: { if case .duration = $0.type { return true } else { return false } })
        else { return nil }
        switch spec.kind {
        case .operator where spec.traits.startsEventTime:
            return "the run's; the operators after it run on the watermark (event time)."
        case .operator:
            return "the stream's: the run's clock (virtual in tests), or after `eventTime` the watermark (event time)."
        case .source:
            return "the run's (virtual in tests); as an inner source in the ops of an event-time stream, the watermark."
        default:
            return "the run's (virtual in tests), even for an event-time stream."
        }
    }

}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

}
