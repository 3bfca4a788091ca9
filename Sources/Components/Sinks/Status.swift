@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let template = Parameter<Template?>(
        "template", doc: "The text for an element (default: the element as text).",
        example: "\"{{ . ? 'searching…' : '' }}\"")
}

extension BuiltinComponents {
    /// `status` — the latest element as a one-line status (loading, errors).
    public static let status = ComponentSpec(
        name: "status",
        summary: "Shows the latest element as a status line: a loading indicator, the last error.",
        docs: """
            On a terminal the line sits under the prompt and above the table, and each element \
            replaces it; null, false and "" clear it. Piped, each status is written to standard \
            error as a line, so standard output keeps only the data. Feed it from an operator's side \
            streams: NAME.executing (mapped to "searching…") merged with NAME.errors.
            """,
        parameters: [Key.template],
        primary: Key.template,
        example: """
            - stream: status
              status: {}
            """,
        checkpointing: .stateless,
        delivery: Delivery(.atMostOnce, "a display: it shows the latest element"),
        factory: .sink { parameters, context in
            StatusSink(template: parameters[Key.template], context: context)
        })
}

final class StatusSink: PipelineSink {
    private let template: Template?
    private let context: ComponentContext
    private let scope: EvaluationScope
    private let screen: Screen

    init(template: Template?, context: ComponentContext) {
        self.template = template
        self.context = context
        scope = context.makeScope()
        let output = context.shared(StandardOutput.self) { StandardOutput() }
        screen = context.shared(Screen.self) { Screen(output: output) }
    }

    func receive(_ event: Event<Value>) {
        guard case .next(let element) = event else { return }
        var value = element
        if let template {
            scope.element = element
            do { value = try template.render(in: scope) } catch { value = .string("status: \(error)") }
        }
        let text: String?
        switch value {
        case .null, .bool(false): text = nil
        case .string(let string): text = string.isEmpty ? nil : string
        default: text = value.description
        }
        if screen.isTerminal {
            screen.setStatus(text)
        } else if let text {
            context.log(text)
        }
    }

    func close() {}
}
