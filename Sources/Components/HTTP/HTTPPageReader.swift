import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// Reads an HTTP source a page at a time.
final class HTTPPageReader: CheckpointedPageReader {
    private let fetch: PagedFetch
    private var next: Result<HTTPRequestData, any Error>?
    /// The first page's request, which every later request copies.
    private let initial: Result<HTTPRequestData, any Error>
    private var fetched = 0
    /// The URLs fetched so far: a next page that is one of them would loop forever.
    private var visited: Set<String> = []

    init(fetch: PagedFetch, first: Result<HTTPRequestData, any Error>) {
        self.fetch = fetch
        initial = first
        next = first
    }

    /// Goes on from `position` (a checkpoint's, read before any page was fetched), the first
    /// page's request giving what the position leaves out: method, headers, body and secret query
    /// values.
    func restore(_ position: Value) {
        fetched = position["pages"]?.intValue ?? 0
        switch position["next"] {
        case .string(let saved)?:
            next = initial.map { first in
                var request = first
                request.url = Self.restoringSecrets(in: saved, from: first.url)
                return request
            }
        case .null?: next = nil
        default: next = initial
        }
    }

    var isFinished: Bool { next == nil }

    /// Where the reader is, for a checkpoint: how many pages it fetched and the URL of the next
    /// page (none once finished). Secret query values of the first request are left out of it,
    /// so no key is written to the state store; a restored reader takes them from its first
    /// request again.
    var position: Value {
        var position = JSONObject()
        position["pages"] = .int(fetched)
        switch next {
        case .success(let request)?:
            let given = (try? initial.get()).flatMap { URLComponents(string: $0.url)?.percentEncodedQueryItems } ?? []
            position["next"] = .string(Self.removingSecrets(from: request.url, given: given))
        case .failure?: break  // the first request could not be made: a restored reader tries again
        case nil: position["next"] = .null
        }
        return .object(position)
    }

    /// `url` with the value of each secret query parameter that the first request gave (`given`)
    /// replaced by a placeholder.
    static func removingSecrets(from url: String, given: [URLQueryItem]) -> String {
        guard var components = URLComponents(string: url), let items = components.percentEncodedQueryItems else {
            return url
        }
        let secrets = given.filter { SecretRedactor.secretQueryNames.contains($0.name.lowercased()) }
        guard !secrets.isEmpty else { return url }
        components.percentEncodedQueryItems = items.map { item in
            secrets.contains(item) ? URLQueryItem(name: item.name, value: SecretRedactor.placeholder) : item
        }
        return components.string ?? url
    }

    /// `saved` with each placeholder put back by the value of the same parameter in `first`.
    static func restoringSecrets(in saved: String, from first: String) -> String {
        guard var components = URLComponents(string: saved), let items = components.percentEncodedQueryItems,
            items.contains(where: { $0.value == SecretRedactor.placeholder })
        else { return saved }
        let given = URLComponents(string: first)?.percentEncodedQueryItems ?? []
        components.percentEncodedQueryItems = items.map { item in
            guard item.value == SecretRedactor.placeholder,
                let original = given.first(where: { $0.name == item.name })
            else { return item }
            return original
        }
        return components.string ?? saved
    }

    func nextPage() -> Observable<Value> {
        guard let next else { return .empty() }
        let request: HTTPRequestData
        switch next {
        case .failure(let error): return .error(error)
        case .success(let made): request = made
        }
        visited.insert(request.url)
        return fetch.setup.fetch(request).flatMap { [self] response -> Observable<Value> in
            do {
                let page = try self.read(response, request: request)
                return .just(.array(page))
            } catch {
                return .error(error)
            }
        }
    }

    private func read(_ response: HTTPResponseData, request: HTTPRequestData) throws -> [Value] {
        let setup = fetch.setup
        let body: Value
        do {
            body = try JSONParser.parse(response.body)
        } catch {
            let type = response.header("content-type").map { " (\($0))" } ?? ""
            throw setup.context.error(
                "\(request.method) \(setup.redactor.redact(url: request.url)): the response is not JSON\(type): "
                    + setup.redactor.redact(HTTPBody.preview(response.body)))
        }
        let items: [Value]
        do {
            items = try fetch.items(body)
        } catch let error as PipelineRuntimeError {
            throw error
        } catch {
            throw setup.context.error(
                "\(request.method) \(setup.redactor.redact(url: request.url)): \(error); the body starts "
                    + setup.redactor.redact(HTTPBody.preview(response.body)))
        }
        let index = fetched
        fetched += 1
        let page = FetchedPage(body: body, items: items, index: index)
        if let maxPages = fetch.maxPages, fetched >= maxPages {
            next = nil
        } else if fetch.isLastPage?(page) == true {
            next = nil
        } else {
            let following = nextRequest(after: page, response: response, request: request)
            if let following, visited.contains(following.url) {
                setup.context.log(
                    "\(setup.context.componentName): the next page, \(setup.redactor.redact(url: following.url)), was fetched "
                        + "already; stopping here rather than going round in a loop", level: .warning)
                next = nil
            } else {
                next = following.map { .success($0) }
            }
        }
        return items
    }

    private func nextRequest(after page: FetchedPage, response: HTTPResponseData, request: HTTPRequestData)
        -> HTTPRequestData?
    {
        var following = request
        switch fetch.pagination {
        case .none:
            return nil
        case .link:
            guard let url = PagedFetch.nextLink(response.header("link"), base: response.url) else { return nil }
            following.url = url
        case .page(let parameter, let start):
            guard !page.items.isEmpty || !fetch.endsOnEmptyPage else { return nil }
            following.url = PagedFetch.setting(parameter, to: String(start + page.index + 1), in: request.url)
        case .cursor(let parameter, let next):
            guard let cursor = try? next(page.body) else { return nil }
            let text: String
            switch cursor {
            case .null: return nil
            case .string(let string): text = string
            default: text = cursor.description
            }
            if text.isEmpty { return nil }
            following.url = PagedFetch.setting(parameter, to: text, in: request.url)
        }
        return following
    }
}
