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
                ScanPaginateSink.observable(triggers, source: source, options: options, context: context)
            }
        })
}

/// How `scanPaginate` was configured.
struct ScanPaginateOptions {
    let accumulate: Bool
    let maxPages: Int?
    let skipErrors: Bool
}

/// The state of one `scanPaginate` subscription, on the pipeline's thread.
final class ScanPaginateSink {
    private let source: PipelineSource
    private let options: ScanPaginateOptions
    private let context: ComponentContext
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private var reader: (any PageReader)?
    private var accumulated: [Value] = []
    private var pages = 0
    private var inFlight: Lifetime?
    private var triggersDone = false
    /// The trigger the reader was made for, and the one of the page in flight.
    private var firstTrigger: Value?
    private var fetching: Value?
    /// What a checkpoint keeps, updated at every change; the checkpoint reads only this box.
    private let state = StateBox<Value>(.null)

    private init(
        source: PipelineSource, options: ScanPaginateOptions, context: ComponentContext, observer: AnyObserver<Value>,
        lifetime: Lifetime
    ) {
        self.source = source
        self.options = options
        self.context = context
        self.observer = observer
        self.lifetime = lifetime
    }

    static func observable(
        _ triggers: Observable<Value>, source: PipelineSource, options: ScanPaginateOptions, context: ComponentContext
    ) -> Observable<Value> {
        Observable { observer, lifetime in
            let sink = ScanPaginateSink(
                source: source, options: options, context: context, observer: observer, lifetime: lifetime)
            let restoredFetch = context.restoredState.flatMap { sink.restore($0) }
            sink.keep()
            let state = sink.state
            context.keepState { state.value }
            // The page in flight at the checkpoint is fetched again before any new trigger.
            if let trigger = restoredFetch { sink.fetch(trigger) }
            // A child lifetime: the triggers ending must not end the page in flight.
            triggers.subscribe(AnyObserver { sink.on($0) }, in: lifetime.makeChild())
        }
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

    private var isExhausted: Bool {
        if let maxPages = options.maxPages, pages >= maxPages { return true }
        return reader?.isFinished ?? false
    }

    private func on(_ event: Event<Value>) {
        if lifetime.isDisposed { return }
        switch event {
        case .next(let trigger):
            guard inFlight == nil, !isExhausted else { return }
            fetch(trigger)
        case .error:
            finish(event)
        case .completed:
            triggersDone = true
            if inFlight == nil { finish(.completed) }
        }
    }

    private func fetch(_ trigger: Value) {
        let reader = self.reader ?? makeReader(trigger)
        if self.reader == nil { firstTrigger = trigger }
        (reader as? CollectingPageReader)?.trigger = trigger
        self.reader = reader
        let work = lifetime.makeChild()
        inFlight = work
        fetching = trigger
        keep()
        work.onDispose { [weak self] in self?.context.sideStreams["executing"]?.onNext(.bool(false)) }
        context.sideStreams["executing"]?.onNext(.bool(true))
        // The page holds the sink (the triggers may have ended and let go of it); disposing of
        // the page lets go again.
        reader.nextPage().subscribe(
            AnyObserver { [self] event in
                guard !work.isDisposed else { return }
                switch event {
                case .next(let page):
                    guard case .array(let items) = page else { return }
                    self.pages += 1
                    self.accumulated.append(contentsOf: items)
                    self.fetching = nil
                    self.keep()
                    self.observer.on(.next(self.options.accumulate ? .array(self.accumulated) : page))
                case .error(let error):
                    self.inFlight = nil
                    self.fetching = nil
                    self.keep()
                    work.dispose()
                    let report = InnerWork.describe(error, context: self.context, element: trigger)
                    self.context.sideStreams["errors"]?.onNext(report)
                    if self.options.skipErrors {
                        if self.triggersDone { self.finish(.completed) }
                    } else {
                        self.finish(.error(error))
                    }
                case .completed:
                    self.inFlight = nil
                    self.fetching = nil
                    self.keep()
                    work.dispose()
                    if self.triggersDone { self.finish(.completed) }
                }
            }, in: work)
    }

    private func finish(_ event: Event<Value>) {
        if lifetime.isDisposed { return }
        observer.on(event)
        lifetime.dispose()
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
