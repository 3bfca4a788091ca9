@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let events = Parameter<Value?>(
        "events", doc: "The timeline: a list of {at, next | error | complete}.",
        example: "[{ at: 0ms, next: cl }, { at: 150ms, next: climate }]")
    static let marbles = Parameter<String?>(
        "marbles", doc: "The timeline as a marble diagram.", example: "\"-a-b---c|\"")
    static let tick = Parameter<RxTimeInterval>(
        "tick", default: .milliseconds(10), doc: "The time of one marble character."
    ).above(RxTimeInterval.zero)
    static let marbleValues = Parameter<ParameterMap<Value>?>(
        "values", doc: "What each marble letter stands for.", example: "{ a: cl, b: clim }")
    static let timeline = Parameter<Template?>(
        "timeline", doc: "An expression giving the timeline, per triggering element.", example: "\"{{ .events }}\"")
    static let file = Parameter<String?>(
        "file", doc: "A JSON or YAML file holding the timeline, relative to the pipeline file.",
        example: "timelines/typing.yaml")
    static let hot = Parameter<Bool>(
        "hot", default: false, doc: "Times count from the start of the pipeline, not from subscription.")
}

/// The timeline source: how `rivulet test`, the component tests and a plugin's tests play
/// elements, errors and completion at set times on a virtual clock (and a built-in source of
/// `rivulet` like any other).
@_spi(Components) public enum Timelines {
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
        parameters: [Key.events, Key.marbles, Key.tick, Key.marbleValues, Key.timeline, Key.file, Key.hot],
        primary: Key.events,
        example: """
            source:
              events:
                - { at: 0ms, next: "cl" }
                - { at: 150ms, next: "climate" }
            """,
        validate: { values, validation in
            let forms: [any ParameterDeclaration] = [Key.events, Key.marbles, Key.timeline, Key.file]
            if forms.filter(values.has).count != 1 {
                validation.error("give one of events, marbles, timeline or file", in: values)
                return
            }
            if let written = values[Key.events] {
                do { _ = try TimelineEntry.parse(written, context: nil) } catch {
                    validation.error("\(error)", at: Key.events, item: (error as? TimelineError)?.entry, in: values)
                }
            }
            if let written = values[Key.marbles] {
                do {
                    _ = try TimelineEntry.parseMarbles(written, tick: .milliseconds(1), values: [:], context: nil)
                } catch {
                    validation.error("\(error)", at: Key.marbles, in: values)
                }
            }
            if let written = values[Key.file] {
                let path = validation.resolvePath(written)
                if !validation.fileExists(written) {
                    validation.error(
                        "cannot read the timeline file '\(written)'", at: Key.file, in: values,
                        note: "looked for \(path)")
                } else {
                    do { _ = try readTimelineFile(path) } catch {
                        validation.error("timeline file '\(written)': \(error)", at: Key.file, in: values)
                    }
                }
            }
        },
        checkpointing: .keepsState("how many entries of its timeline it emitted"),
        delivery: Delivery(
            .atLeastOnce,
            "with --state, a resumed run emits again what came after the last checkpoint (a timeline that had ended ends again at once); without it, a new run starts the timeline over"
        ),
        factory: .source { parameters, context in
            let hot = parameters[Key.hot]
            let scheduler = context.scheduler
            if let file = parameters[Key.file] {
                let entries: [TimelineEntry]
                do {
                    entries = try readTimelineFile(context.resolvePath(file))
                } catch {
                    throw context.error("timeline file '\(file)': \(error)")
                }
                return PipelineSource { _ in TimelineEntry.checkpointed(entries, hot: hot, context: context) }
            }
            if let events = parameters[Key.events] {
                let entries = try TimelineEntry.parse(events, context: context)
                return PipelineSource { _ in TimelineEntry.checkpointed(entries, hot: hot, context: context) }
            }
            if let marbles = parameters[Key.marbles] {
                let letters = Dictionary(
                    (parameters[Key.marbleValues]?.pairs ?? []).map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
                let entries = try TimelineEntry.parseMarbles(
                    marbles, tick: parameters[Key.tick], values: letters, context: context)
                return PipelineSource { _ in TimelineEntry.checkpointed(entries, hot: hot, context: context) }
            }
            guard let template = parameters[Key.timeline] else { return PipelineSource { _ in .never() } }
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

    /// The entries of a timeline file (JSON, or YAML by its extension).
    static func readTimelineFile(_ path: String) throws -> [TimelineEntry] {
        guard let text = LocalFiles.readText(path) else { throw TimelineError("cannot read \(path)") }
        let document: Value
        if path.hasSuffix(".yaml") || path.hasSuffix(".yml") {
            do throws(YAMLDocumentError) { document = try YAMLDocument.value(of: text, file: path) } catch {
                throw TimelineError("not valid YAML: \(error)")
            }
        } else {
            do throws(JSONError) { document = try JSONParser.parse(text) } catch {
                throw TimelineError("not valid JSON: \(error)")
            }
        }
        return try TimelineEntry.parse(document, context: nil)
    }
}
