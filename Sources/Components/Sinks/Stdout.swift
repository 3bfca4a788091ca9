@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum StdoutFormat: String, ParameterChoice {
    case jsonl, pretty
}
private enum Key {
    static let format = Parameter<StdoutFormat>(
        "format", default: .jsonl, doc: "jsonl: one compact JSON value a line; pretty: indented JSON.")
    static let template = Parameter<Template?>(
        "template", doc: "A line of text per element instead of JSON.", example: "\"{{ .title }} ({{ .date }})\"")
}

extension BuiltinComponents {
    /// `stdout` — writes each element to standard output.
    public static let stdout = ComponentSpec(
        name: "stdout",
        summary: "Writes each element to standard output: JSON Lines by default, pretty JSON, or a template.",
        docs: "Output is written in whole lines and flushed when the pipeline ends, fails or is stopped.",
        parameters: [Key.format, Key.template],
        primary: Key.format,
        example: "sink: stdout",
        checkpointing: .restartsWork("the lines written since the last checkpoint, which are written again"),
        delivery: Delivery(
            .atLeastOnce,
            "with --state, a resumed run writes again the lines since the last checkpoint; lines are written whole"),
        elementErrors: true,
        factory: .sink { parameters, context in
            StdoutSink(
                pretty: parameters[Key.format] == .pretty, template: parameters[Key.template], context: context)
        })
}

final class StdoutSink: FlushingSink {
    private let output: StandardOutput
    private let scheduler: any SchedulerType
    private let pretty: Bool
    private let template: Template?
    private let scope: EvaluationScope
    private let context: ComponentContext
    private var bytes: [UInt8] = []

    init(pretty: Bool, template: Template?, context: ComponentContext) {
        self.pretty = pretty
        self.template = template
        self.scope = context.makeScope()
        self.output = context.shared(StandardOutput.self) { StandardOutput() }
        if let meter = context.meter { output.count(on: meter) }
        self.scheduler = context.scheduler
        self.context = context
    }

    func receive(_ event: Event<Value>) throws {
        guard case .next(let value) = event else { return }
        try output.check(context)
        if let template {
            guard let line = try context.handling(value, { try context.render(template, value, in: scope) }) else {
                return
            }
            output.writeLine(line.stringValue ?? line.description, scheduler: scheduler)
        } else if pretty {
            output.writeLine(JSONSerializer.prettyString(value), scheduler: scheduler)
        } else {
            bytes.removeAll(keepingCapacity: true)
            JSONSerializer.write(value, to: &bytes)
            output.writeLine(bytes, scheduler: scheduler)
        }
    }

    /// Writes out what is buffered (before a durable source's message is acknowledged).
    func flush() throws {
        output.flush()
        try output.check(context)
    }

    func close() throws {
        output.flush()
        try output.check(context)
    }
}
