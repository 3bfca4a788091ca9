import Pipeline
import Reactive

extension BuiltinComponents {
    /// `events` — a timeline of elements: inline, as marbles, or from an expression.
    public static let events = ComponentSpec(
        name: "events",
        summary:
            "Emits a timeline of elements, errors and completion: inline, as marbles, from an expression or a file.",
        docs: """
            Times are relative to subscription (cold, the default) or to the start of the pipeline \
            (hot: true). Marbles: '-' is one tick, a letter is an element (looked up in values), '|' \
            completes, '#' fails, '( )' groups events in one tick. A timeline given as a template is \
            evaluated for each element that triggers the source, so an inner source of flatMapLatest \
            can take its events from the element. Without a completion entry the source stays open.
            """,
        parameters: [
            ParameterSpec(
                "events", .value, doc: "The timeline: a list of {at, next | error | complete}.",
                example: "[{ at: 0ms, next: cl }, { at: 150ms, next: climate }]"),
            ParameterSpec("marbles", .string, doc: "The timeline as a marble diagram.", example: "\"-a-b---c|\""),
            ParameterSpec("tick", .duration, default: "10ms", doc: "The time of one marble character."),
            ParameterSpec(
                "values", .map(.value), doc: "What each marble letter stands for.", example: "{ a: cl, b: clim }"),
            ParameterSpec(
                "timeline", .template, doc: "An expression giving the timeline, per triggering element.",
                example: "\"{{ .events }}\""),
            ParameterSpec(
                "file", .string, doc: "A JSON or YAML file holding the timeline, relative to the pipeline file.",
                example: "timelines/typing.yaml"),
            ParameterSpec(
                "hot", .bool, default: false, doc: "Times count from the start of the pipeline, not from subscription."),
        ],
        primary: "events",
        example: """
            source:
              events:
                - { at: 0ms, next: "cl" }
                - { at: 150ms, next: "climate" }
            """,
        check: { parameters in
            let given = ["events", "marbles", "timeline", "file"].filter(parameters.has)
            if given.count != 1 { return "give one of events, marbles, timeline or file" }
            if let events = parameters.value("events") {
                do { _ = try TimelineEntry.parse(events, context: nil) } catch { return "\(error)" }
            }
            if let marbles = parameters.string("marbles") {
                do {
                    _ = try TimelineEntry.parseMarbles(marbles, tick: .milliseconds(1), values: [:], context: nil)
                } catch {
                    return "\(error)"
                }
            }
            return nil
        },
        factory: .source { parameters, context in
            let hot = parameters.bool("hot") ?? false
            let scheduler = context.scheduler
            if let file = parameters.string("file") {
                let path = context.resolvePath(file)
                let format = path.hasSuffix(".yaml") || path.hasSuffix(".yml") ? "yaml" : "json"
                guard PipelineLoader.readFile(path) != nil else {
                    throw context.error("cannot read the timeline file '\(file)' (looked for \(path))")
                }
                let timeline = try Fixture.readDocument(path: path, format: format, context: context)
                let entries: [TimelineEntry]
                do {
                    entries = try TimelineEntry.parse(timeline, context: context)
                } catch {
                    throw context.error("timeline file '\(file)': \(error)")
                }
                return PipelineSource { _ in TimelineEntry.observable(entries, hot: hot, scheduler: scheduler) }
            }
            if let events = parameters.value("events") {
                let entries = try TimelineEntry.parse(events, context: context)
                return PipelineSource { _ in TimelineEntry.observable(entries, hot: hot, scheduler: scheduler) }
            }
            if let marbles = parameters.string("marbles") {
                var values: [String: Value] = [:]
                for (key, entry) in parameters.map("values") ?? [] {
                    if case .value(let value) = entry { values[key] = value }
                }
                let entries = try TimelineEntry.parseMarbles(
                    marbles, tick: parameters.duration("tick") ?? .milliseconds(10), values: values, context: context)
                return PipelineSource { _ in TimelineEntry.observable(entries, hot: hot, scheduler: scheduler) }
            }
            let template = parameters.template("timeline")!
            return PipelineSource { element in
                Observable.deferred {
                    let timeline = try context.render(template, element, in: context.makeScope())
                    do {
                        return TimelineEntry.observable(
                            try TimelineEntry.parse(timeline, context: context), hot: hot, scheduler: scheduler)
                    } catch {
                        throw context.error("\(error)", element: element)
                    }
                }
            }
        })
}
