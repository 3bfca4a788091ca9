import Foundation
import Pipeline
import Reactive

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
            ParameterSpec(
                "url", .template, required: true, doc: "The URL; a template over the triggering element.",
                example: "\"https://api.example.com/search?q={{ . }}\""),
            ParameterSpec("method", .string, default: "GET", doc: "The HTTP method."),
            ParameterSpec(
                "query", .map(.template), doc: "Query parameters to add (templates; empty values are left out).",
                example: "{ q: \"{{ . }}\", per_page: \"50\" }"),
            ParameterSpec(
                "headers", .map(.template), doc: "Request headers (templates).",
                example: "{ Authorization: \"Bearer ${TOKEN}\" }"),
            ParameterSpec(
                "body", .template, doc: "The request body; a value that is not a string is sent as JSON.",
                example: "\"{{ {query: .} }}\""),
            ParameterSpec("select", .expression, doc: "The items of a page's body.", example: ".data.items"),
            ParameterSpec(
                "paginate", .oneOf(["none", "link", "page", "cursor"]), default: "none",
                doc: "How to find the next page."),
            ParameterSpec("pageParam", .string, default: "page", doc: "paginate: page — the page-number parameter."),
            ParameterSpec("pageStart", .int, default: 1, doc: "paginate: page — the first page's number."),
            ParameterSpec("cursorParam", .string, default: "cursor", doc: "paginate: cursor — the cursor parameter."),
            ParameterSpec(
                "cursor", .expression, doc: "paginate: cursor — the next cursor, from the body.",
                example: ".meta.next_cursor"),
        ] + PagedFetch.commonParameters,
        primary: "url",
        example: """
            - flatMapLatest:
                http: { url: "https://api.example.com/search", query: { q: "{{ . }}" }, select: .items, paginate: link }
            """,
        check: { parameters in
            if parameters.string("paginate") == "cursor" && parameters.expression("cursor") == nil {
                return "paginate: cursor needs a 'cursor' expression that finds the next cursor in the body"
            }
            return nil
        },
        factory: .source { parameters, context in
            let setup = try HTTPClientSetup(parameters: parameters, context: context)
            let urlTemplate = parameters.template("url")!
            let method = (parameters.string("method") ?? "GET").uppercased()
            let query = parameters.map("query") ?? []
            let headers = parameters.map("headers") ?? []
            let bodyTemplate = parameters.template("body")
            let select = parameters.expression("select")
            let pagination: Pagination
            switch parameters.string("paginate") {
            case "link": pagination = .link
            case "page":
                pagination = .page(
                    parameter: parameters.string("pageParam") ?? "page", start: parameters.int("pageStart") ?? 1)
            case "cursor":
                let cursor = parameters.expression("cursor")!
                let scope = context.makeScope()
                pagination = .cursor(
                    parameter: parameters.string("cursorParam") ?? "cursor",
                    next: { body in try context.evaluate(cursor, body, in: scope) })
            default: pagination = .none
            }
            let itemScope = context.makeScope()
            let fetch = PagedFetch(
                setup: setup, pagination: pagination,
                items: { body in try ItemSelection.items(body, select: select, context: context, scope: itemScope) },
                maxPages: parameters.int("maxPages"))
            let emit = EmitMode(rawValue: parameters.string("emit") ?? "items") ?? .items
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
        _ element: Value, url: Template, method: String, query: [(String, ParameterValues.Entry)],
        headers: [(String, ParameterValues.Entry)], body: Template?, context: ComponentContext
    ) throws -> HTTPRequestData {
        let scope = context.makeScope()
        func text(_ entry: ParameterValues.Entry) throws -> String? {
            try APISource.text(of: entry, element, scope: scope, context: context)
        }
        let rendered = try context.render(url, element, in: scope)
        guard case .string(let address) = rendered, var components = URLComponents(string: address),
            components.scheme != nil, components.host != nil
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
}
