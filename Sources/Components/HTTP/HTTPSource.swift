import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum PaginationMode: String, ParameterChoice {
    case none, link, page, cursor
}
private enum Key {
    static let url = Parameter<Template>(
        "url", doc: "The URL; a template over the triggering element.",
        example: "\"https://api.example.com/search?q={{ . }}\"")
    static let method = Parameter<String>("method", default: "GET", doc: "The HTTP method.")
    static let query = Parameter<ParameterMap<Template>?>(
        "query", doc: "Query parameters to add (templates; empty values are left out).",
        example: "{ q: \"{{ . }}\", per_page: \"50\" }")
    static let headers = Parameter<ParameterMap<Template>?>(
        "headers", doc: "Request headers (templates).", example: "{ Authorization: \"Bearer ${TOKEN}\" }")
    static let body = Parameter<Template?>(
        "body", doc: "The request body; a value that is not a string is sent as JSON.", example: "\"{{ {query: .} }}\"")
    static let select = Parameter<Pipeline.Expression?>(
        "select", doc: "The items of a page's body.", example: ".data.items")
    static let paginate = Parameter<PaginationMode>("paginate", default: .none, doc: "How to find the next page.")
    static let pageParam = Parameter<String>(
        "pageParam", default: "page", doc: "paginate: page — the page-number parameter.")
    static let pageStart = Parameter<Int>("pageStart", default: 1, doc: "paginate: page — the first page's number.")
    static let cursorParam = Parameter<String>(
        "cursorParam", default: "cursor", doc: "paginate: cursor — the cursor parameter.")
    static let cursor = Parameter<Pipeline.Expression?>(
        "cursor", doc: "paginate: cursor — the next cursor, from the body.", example: ".meta.next_cursor")
}

extension BuiltinComponents {
    /// `http: {url: …}` — JSON over HTTP, with pagination, retries and rate limits.
    public static let http = ComponentSpec(
        name: "http",
        summary: "Fetches JSON over HTTP: templated URL, query, headers and body; pages; retries; rate limits.",
        docs: """
            A request starts when the source is subscribed and is cancelled, its connection closed, \
            when the subscription is disposed (so flatMapLatest dropping an inner aborts its request). \
            select picks the items out of each page's body (the body itself when it is a list). \
            paginate: link follows the Link header's rel="next"; page sets pageParam from pageStart \
            until a page has no items; cursor sets cursorParam to the value of the cursor expression on \
            the body until it is null or empty. Retries: see retry. A status that is not retried fails \
            the pipeline (or, inside flatMap* with onError: skip, goes to the errors side stream) with \
            the status, the API's message and the URL, keys removed. A body that is not JSON is an \
            error that shows its first bytes. Responses come from the network, from a recording \
            (rivulet run --replay) or, under rivulet test, from the test's http section.
            """,
        parameters: [
            Key.url, Key.method, Key.query, Key.headers, Key.body, Key.select, Key.paginate, Key.pageParam,
            Key.pageStart, Key.cursorParam, Key.cursor,
        ]
            + PagedFetch.commonParameters,
        primary: Key.url,
        example: """
            - flatMapLatest:
                http: { url: "https://api.example.com/search", query: { q: "{{ . }}" }, select: .items, paginate: link }
            """,
        validate: { values, validation in
            if values[Key.paginate] == .cursor && values[Key.cursor] == nil {
                validation.error(
                    "paginate: cursor needs a 'cursor' expression that finds the next cursor in the body",
                    at: Key.paginate,
                    in: values)
            }
            // A URL without templates is known now: check it now rather than at the first request.
            let written = values[Key.url].source
            if !written.contains("{{"), !HTTPSourceRequest.isAbsolute(written) {
                validation.error("url '\(written)' is not an absolute http(s) URL", at: Key.url, in: values)
            }
        },
        checkpointing: PagedFetch.checkpointing,
        delivery: PagedFetch.delivery,
        factory: .source { parameters, context in
            let setup = try PagedFetch.setup(parameters, context: context)
            let urlTemplate = parameters[Key.url]
            let method = parameters[Key.method].uppercased()
            let query = parameters[Key.query]?.pairs ?? []
            let headers = parameters[Key.headers]?.pairs ?? []
            let bodyTemplate = parameters[Key.body]
            let select = parameters[Key.select]
            let pagination: Pagination
            switch parameters[Key.paginate] {
            case .link: pagination = .link
            case .page: pagination = .page(parameter: parameters[Key.pageParam], start: parameters[Key.pageStart])
            case .cursor:
                let cursor = parameters[Key.cursor]  // given: validate requires it with paginate: cursor
                let scope = context.makeScope()
                pagination = .cursor(
                    parameter: parameters[Key.cursorParam],
                    next: { body in try cursor.map { try context.evaluate($0, body, in: scope) } ?? .null })
            case .none: pagination = .none
            }
            let itemScope = context.makeScope()
            let fetch = PagedFetch(
                setup: setup, pagination: pagination,
                items: { body in try ItemSelection.items(body, select: select, context: context, scope: itemScope) },
                maxPages: parameters[PagedFetch.maxPages])
            let emit = parameters[PagedFetch.emit]
            if case .page(let parameter, let start) = pagination {
                // The first request asks for the first page explicitly.
                return fetch.source(emit: emit) { element in
                    var request = try HTTPSourceRequest.make(
                        element, url: urlTemplate, method: method, query: query, headers: headers, body: bodyTemplate,
                        context: context)
                    request.url = PagedFetch.setting(parameter, to: String(start), in: request.url)
                    return request
                }
            }
            return fetch.source(emit: emit) { element in
                try HTTPSourceRequest.make(
                    element, url: urlTemplate, method: method, query: query, headers: headers, body: bodyTemplate,
                    context: context)
            }
        })
}

/// Builds the `http` source's request for one triggering element.
enum HTTPSourceRequest {
    static func make(
        _ element: Value, url: Template, method: String, query: [(key: String, value: Template)],
        headers: [(key: String, value: Template)], body: Template?, context: ComponentContext
    ) throws -> HTTPRequestData {
        let scope = context.makeScope()
        func text(_ template: Template) throws -> String? {
            try APISource.text(of: template, element, scope: scope, context: context)
        }
        let rendered = try context.render(url, element, in: scope)
        guard case .string(let address) = rendered, isAbsolute(address), var components = URLComponents(string: address)
        else {
            throw context.error("url '\(rendered.text)' is not an absolute http(s) URL", element: element)
        }
        var items = components.queryItems ?? []
        for (name, entry) in query {
            if let value = try text(entry), !value.isEmpty { items.append(URLQueryItem(name: name, value: value)) }
        }
        if !items.isEmpty { components.queryItems = items }
        var request = HTTPRequestData(method: method, url: components.string ?? address)
        request.headers.append(("Accept", "application/json"))
        for (name, entry) in headers {
            if let value = try text(entry) {
                request.headers.removeAll { $0.0.lowercased() == name.lowercased() }
                request.headers.append((name, value))
                if SecretRedactor.isSecretHeader(name) {
                    // "Bearer abc": the token is the secret, wherever it shows up again.
                    let session = context.shared(HTTPSession.self) { HTTPSession(mode: .live) }
                    session.redactor.add(value.split(separator: " ").last.map(String.init) ?? value)
                }
            }
        }
        if let body {
            let value = try context.render(body, element, in: scope)
            if case .string(let string) = value {
                request.body = Array(string.utf8)
            } else {
                var bytes: [UInt8] = []
                JSONSerializer.write(value, to: &bytes)
                request.body = bytes
                request.headers.append(("Content-Type", "application/json"))
            }
        }
        return request
    }

    /// Whether `address` is an absolute URL with a scheme and a host.
    static func isAbsolute(_ address: String) -> Bool {
        guard let components = URLComponents(string: address) else { return false }
        return components.scheme != nil && components.host != nil
    }
}
