import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// What an HTTP source emits.
enum EmitMode: String, ParameterChoice {
    /// Each item, as its own element.
    case items
    /// One array per page.
    case page
    /// One array of every item, when the last page has come.
    case all
}

/// How an HTTP source finds its next page.
enum Pagination {
    /// One request, one page.
    case none
    /// Follow the `Link` header's `rel="next"` URL (GitHub, Foursquare).
    case link
    /// Set a page-number query parameter, from `start`, until a page has no items.
    case page(parameter: String, start: Int)
    /// Set a query parameter to a value taken from the response body; none (null or "") ends it.
    case cursor(parameter: String, next: (Value) throws -> Value)
}

/// A page as fetched: its body, its items, which page it was (0-based).
struct FetchedPage {
    let body: Value
    let items: [Value]
    let index: Int
}

/// What one HTTP source needs to fetch its pages.
struct PagedFetch {
    let setup: HTTPClientSetup
    let pagination: Pagination
    /// The items of a page's body.
    let items: (Value) throws -> [Value]
    let maxPages: Int?
    /// An API's own end rule (NYT's 100-page cap, GitHub's 1,000 results), after a page.
    var isLastPage: ((FetchedPage) -> Bool)?
    /// Whether a page without items is the last (page-number pagination).
    var endsOnEmptyPage = true

    /// What the source emits.
    static let emit = Parameter<EmitMode>(
        "emit", default: .items,
        doc: "items: each item; page: one array per page; all: one array of everything, at the end.")
    /// The most pages fetched.
    static let maxPages = Parameter<Int?>("maxPages", doc: "Stop after this many pages.", example: "5").atLeast(1)
    /// How long one request may take.
    static let timeout = Parameter<RxTimeInterval>(
        "timeout", default: .seconds(30), doc: "The longest one request may take."
    ).above(RxTimeInterval.zero)

    /// How an HTTP source takes part in checkpoints.
    static var checkpointing: Checkpointing {
        .restartsWork(
            "the page it was fetching: a resumed run fetches that page again and goes on from there; pages it "
                + "had finished are not fetched again")
    }

    /// What an HTTP source promises about its pages.
    static var delivery: Delivery {
        Delivery(
            .atLeastOnce,
            "with --state, a resumed run fetches again the page it was fetching and goes on; without it, a new "
                + "run starts from the first page")
    }

    /// The shared parameters of HTTP sources.
    static let commonParameters: [any ParameterDeclaration] = [emit, maxPages, timeout, RetryPolicy.parameter]

    /// The request setup of a source declaring `commonParameters`.
    static func setup(_ parameters: ParameterValues, context: ComponentContext) throws -> HTTPClientSetup {
        try HTTPClientSetup(timeout: parameters[timeout], retry: parameters[RetryPolicy.parameter], context: context)
    }

    /// The source: emits according to `emit`; `scanPaginate` reads it a page at a time instead.
    /// Checkpointed, it keeps its place between pages: a resumed run fetches the page it was
    /// waiting for again and goes on from there.
    func source(emit: EmitMode, request: @escaping (Value) throws -> HTTPRequestData) -> PipelineSource {
        let fetch = self
        let context = setup.context
        return PipelineSource(
            { element in
                Observable.deferred {
                    let first = Result { try request(element) }
                    let saved = context.restoredState
                    let reader = HTTPPageReader(fetch: fetch, first: first)
                    if let position = saved?["reader"] { reader.restore(position) }
                    return Self.observe(
                        reader, emit: emit, collected: saved?["items"]?.arrayValue ?? [], context: context)
                }
            },
            pages: { element in HTTPPageReader(fetch: fetch, first: Result { try request(element) }) })
    }

    private static func observe(
        _ reader: HTTPPageReader, emit: EmitMode, collected: [Value], context: ComponentContext
    ) -> Observable<Value> {
        // What a checkpoint keeps, updated after each page; the checkpoint reads only this box.
        let state = StateBox<Value>(.null)
        let checkpointed = context.checkpoints != nil
        func keep(_ everything: [Value]) {
            guard checkpointed else { return }
            state.value =
                emit == .all ? ["reader": reader.position, "items": .array(everything)] : ["reader": reader.position]
        }
        return Observable.create { observer in
            let current = SerialDisposable()
            var everything = collected
            keep(everything)
            context.keepState { state.value }
            func fetchNext() {
                if reader.isFinished {
                    if emit == .all { observer.on(.next(.array(everything))) }
                    observer.on(.completed)
                    return
                }
                current.disposable = reader.nextPage().subscribe(
                    onNext: { page in
                        guard case .array(let items) = page else { return }
                        if emit == .all { everything.append(contentsOf: items) }
                        keep(everything)
                        switch emit {
                        case .items: for item in items { observer.on(.next(item)) }
                        case .page: observer.on(.next(page))
                        case .all: break
                        }
                    },
                    onError: { observer.on(.error($0)) },
                    onCompleted: { fetchNext() })
            }
            fetchNext()
            return current
        }
    }

    /// The `rel="next"` URL of a `Link` header, resolved against `base`.
    static func nextLink(_ header: String?, base: String) -> String? {
        guard let header else { return nil }
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { return nil }
            let target = String(rest[rest.index(after: open)..<close])
            let afterTarget = rest[rest.index(after: close)...]
            // Parameters run to the next '<' (commas may separate entries or sit inside quotes).
            let end = afterTarget.firstIndex(of: "<") ?? afterTarget.endIndex
            let parameters = afterTarget[..<end].lowercased()
            if parameters.contains("rel=\"next\"") || parameters.contains("rel=next")
                || parameters.contains(" next ") || parameters.contains("rel=\"next ")
            {
                return URL(string: target, relativeTo: URL(string: base))?.absoluteString ?? target
            }
            rest = afterTarget[end...]
        }
        return nil
    }

    /// `url` with the query parameter `name` set to `value`.
    static func setting(_ name: String, to value: String, in url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        var items = components.queryItems ?? []
        items.removeAll { $0.name == name }
        items.append(URLQueryItem(name: name, value: value))
        components.queryItems = items
        return components.string ?? url
    }
}
