@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum PageEmission: String, ParameterChoice {
    case accumulated, page
}
private enum Key {
    static let emit = Parameter<PageEmission>(
        "emit", default: .accumulated, doc: "accumulated: every item so far, as one list; page: the new page's items.")
    static let maxPages = Parameter<Int?>("maxPages", doc: "Fetch at most this many pages.", example: "5").atLeast(1)
}

extension BuiltinComponents {
    /// `scanPaginate: {SOURCE}` — "load the next page" on each trigger, pages accumulated.
    public static let scanPaginate = ComponentSpec(
        name: "scanPaginate",
        summary: "Fetches the next page of its inner source on each trigger and emits the pages accumulated.",
        docs: """
            The "More Next 10" button and scroll-to-bottom of the seed apps: each element of the \
            stream is a trigger. A trigger fetches the next page unless a page is in flight (the \
            trigger is ignored, as the apps do with isLoading), the last page was reached, or \
            maxPages pages were fetched. The inner source's templates see the first trigger. HTTP \
            sources are read a page at a time; any other source counts as one page per trigger (its \
            elements, collected), and an empty page is the last. Emits the items of every page so far \
            as one list (emit: page, only the new page's). Completes when the triggers have and no \
            page is in flight. Side streams: NAME.executing (a page in flight) and NAME.errors; with \
            onError: skip a failed page goes to errors and the next trigger tries it again.
            """,
        parameters: InnerWork.parameters + [Key.emit, Key.maxPages],
        primary: InnerWork.source,
        example: """
            - scanPaginate:
                source: { github.search: { q: "language:swift", sort: stars, perPage: 10 } }
                maxPages: 5
            """,
        sideStreams: InnerWork.sideStreams,
        checkpointing: .keepsState(
            "the pages it fetched, their items and the next page's place; a page in flight at the checkpoint is "
                + "fetched again (at-least-once), a source that is not HTTP is read again for it"),
        factory: .operator { parameters, context in
            let source = try context.build(parameters[InnerWork.source])
            let options = ScanPaginateOptions(
                accumulate: parameters[Key.emit] == .accumulated, maxPages: parameters[Key.maxPages],
                skipErrors: parameters[InnerWork.onError] != .fail)
            return { triggers in
                triggers.exclusiveWork { PageFetchRules(source: source, options: options, context: context) }
            }
        })
}

/// How `scanPaginate` was configured.
struct ScanPaginateOptions {
    let accumulate: Bool
    let maxPages: Int?
    let skipErrors: Bool
}

/// `scanPaginate`'s rules over the runtime's `exclusiveWork` (one page at a time, a trigger
/// ignored while one is in flight): the reader, the pages fetched and their items, and what a
/// checkpoint keeps.
final class PageFetchRules: ExclusiveWorkRules {
    private let source: PipelineSource
    private let options: ScanPaginateOptions
    private let context: ComponentContext
    private var reader: (any PageReader)?
    private var accumulated: [Value] = []
    private var pages = 0
    /// The trigger the reader was made for, and the one of the page in flight.
    private var firstTrigger: Value?
    private var fetching: Value?
    /// What a checkpoint keeps, updated at every change; the checkpoint reads only this box.
    private let state = StateBox<Value>(.null)

    init(source: PipelineSource, options: ScanPaginateOptions, context: ComponentContext) {
        self.source = source
        self.options = options
        self.context = context
    }

    func subscribed(in lifetime: Lifetime) -> Value? {
        let restoredFetch = context.restoredState.flatMap { restore($0) }
        keep()
        context.keepState { [state] in state.value }
        // The page in flight at the checkpoint is fetched again before any new trigger.
        return restoredFetch
    }

    /// Takes back what a checkpoint kept; returns the trigger of the page that was in flight.
    private func restore(_ saved: Value) -> Value? {
        pages = saved["pages"]?.intValue ?? 0
        accumulated = saved["items"]?.arrayValue ?? []
        if let trigger = saved["trigger"], let position = saved["reader"] {
            let reader = makeReader(trigger)
            (reader as? any CheckpointedPageReader)?.restore(position)
            self.reader = reader
            firstTrigger = trigger
        }
        return saved["fetching"]
    }

    /// Puts the state a checkpoint keeps in `state`, when the run keeps state.
    private func keep() {
        guard context.checkpoints != nil else { return }
        var saved = JSONObject()
        saved["pages"] = .int(pages)
        if options.accumulate { saved["items"] = .array(accumulated) }
        if let reader, let firstTrigger, let reader = reader as? any CheckpointedPageReader {
            saved["trigger"] = firstTrigger
            saved["reader"] = reader.position
        }
        if let fetching { saved["fetching"] = fetching }
        state.value = .object(saved)
    }

    private func makeReader(_ trigger: Value) -> any PageReader {
        source.pages?(trigger) ?? CollectingPageReader(source: source, trigger: trigger)
    }

    func admits(_ trigger: Value) -> Bool {
        if let maxPages = options.maxPages, pages >= maxPages { return false }
        return !(reader?.isFinished ?? false)
    }

    func work(for trigger: Value, running: Lifetime) -> Observable<Value> {
        let reader = self.reader ?? makeReader(trigger)
        if self.reader == nil { firstTrigger = trigger }
        (reader as? CollectingPageReader)?.trigger = trigger
        self.reader = reader
        fetching = trigger
        keep()
        running.onDispose { [context] in context.sideStreams["executing"]?.onNext(.bool(false)) }
        context.sideStreams["executing"]?.onNext(.bool(true))
        return reader.nextPage().compactMap { [self] page in
            guard case .array(let items) = page else { return nil }
            pages += 1
            accumulated.append(contentsOf: items)
            fetching = nil
            keep()
            return options.accumulate ? .array(accumulated) : page
        }
    }

    func failed(_ error: any Error, input trigger: Value) -> (any Error)? {
        fetching = nil
        keep()
        context.sideStreams["errors"]?.onNext(InnerWork.describe(error, context: context, element: trigger))
        return options.skipErrors ? nil : error
    }

    func ended() {
        fetching = nil
        keep()
    }
}

/// A page reader that says where it is, for a checkpoint, and goes on from there.
protocol CheckpointedPageReader: PageReader {
    /// Where it is: a `Value` a checkpoint keeps.
    var position: Value { get }
    /// Goes on from `position`, before it reads any page.
    func restore(_ position: Value)
}

/// A page reader over any source: each page is what the source emits for one trigger, collected;
/// an empty page is the last.
final class CollectingPageReader: CheckpointedPageReader {
    private let source: PipelineSource
    /// The trigger the next page is made for.
    var trigger: Value
    private(set) var isFinished = false

    init(source: PipelineSource, trigger: Value) {
        self.source = source
        self.trigger = trigger
    }

    var position: Value { ["finished": .bool(isFinished)] }

    func restore(_ position: Value) {
        isFinished = position["finished"]?.boolValue ?? false
    }

    func nextPage() -> Observable<Value> {
        source.make(trigger).toArray().map { Value.array($0) }.do(onNext: { [weak self] page in
            if case .array(let items) = page, items.isEmpty { self?.isFinished = true }
        })
    }
}
