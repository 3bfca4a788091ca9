import Foundation
import Pipeline
import Reactive

/// What `nyt.search` and `nyt.newest` share: NYT's Article Search API, 10 articles a page, at
/// most 100 pages (1,000 results), the key in the `api-key` query parameter.
enum NYTArticleSearch {
    static let path = "/svc/search/v2/articlesearch.json"
    static let pageSize = 10
    static let pageLimit = 100

    static let fq = Parameter<Template?>(
        "fq", doc: "A filter query (Lucene syntax).", example: "'news_desk:(\"Sports\")'")
    static let beginDate = Parameter<Template?>("beginDate", doc: "The first day, YYYYMMDD.", example: "\"20240101\"")
    static let endDate = Parameter<Template?>("endDate", doc: "The last day, YYYYMMDD.", example: "\"20241231\"")
    static let page = Parameter<Int?>(
        "page",
        doc:
            "The first page to fetch (0-based; 10 articles a page); without it, the first request sends no page (the API's default, 0).",
        example: "0")
    static let fl = Parameter<Template?>(
        "fl", doc: "Only these fields of each article, comma-separated (the API's fl).",
        example: "\"web_url,pub_date,headline,byline\"")
    static let stopAtLastPage = Parameter<Bool>(
        "stopAtLastPage", default: true,
        doc:
            "false: every page is followed by the next, even after a short or empty one or the API's 100-page cap (as an app with no last-page check; the API then answers 400)."
    )
    static let api = APIParameters(
        baseURL: "https://api.nytimes.com", keyVariable: "NYT_API_KEY",
        keyDoc: "The environment variable holding the API key.")

    /// Parameters both sources take.
    static let parameters: [any ParameterDeclaration] = [fq, fl, beginDate, endDate, page, stopAtLastPage] + api.all

    /// The source searching for `q` in the order `sort`.
    static func source(_ parameters: ParameterValues, context: ComponentContext, q: Template?, sort: String) throws
        -> PipelineSource
    {
        let source = try APISource(api, parameters: parameters, context: context)
        let variable = parameters[api.keyVariable]
        let key = source.key(variable, fallbacks: ["NYT_KEY"])
        let isLive = source.isLive
        let sendsFirstPage = parameters[page] != nil
        let firstPage = max(0, min(parameters[page] ?? 0, pageLimit - 1))
        let stopsAtLastPage = parameters[stopAtLastPage]
        let templates = [
            ("q", q), ("fq", parameters[fq]), ("fl", parameters[fl]), ("begin_date", parameters[beginDate]),
            ("end_date", parameters[endDate]),
        ]
        var fetch = PagedFetch(
            setup: source.setup, pagination: .page(parameter: "page", start: firstPage),
            items: { body in try ItemSelection.list(body, at: ["response", "docs"]).map(normalize) },
            maxPages: parameters[PagedFetch.maxPages],
            isLastPage: { page in
                let number = firstPage + page.index
                var hits = Int.max
                if case .object(let root) = page.body, case .object(let response)? = root["response"],
                    case .object(let meta)? = response["meta"], case .int(let total)? = meta["hits"]
                {
                    hits = total
                }
                return page.items.count < pageSize || (number + 1) * pageSize >= min(hits, pageLimit * pageSize)
                    || number + 1 >= pageLimit
            })
        if !stopsAtLastPage {
            fetch.isLastPage = nil
            fetch.endsOnEmptyPage = false
        }
        return fetch.source(emit: parameters[PagedFetch.emit]) { element in
            if isLive && key == nil {
                throw context.error("set \(variable) to your NYT API key (or run with --replay FILE)")
            }
            var query = try source.query(templates, element: element)
            query.append(("sort", sort))
            if sendsFirstPage { query.append(("page", String(firstPage))) }
            if let key { query.append(("api-key", key)) }
            return HTTPRequestData(url: try source.url(path, query: query), headers: [("Accept", "application/json")])
        }
    }

    /// An article with an `image` field that reads the same whichever shape `multimedia` has:
    /// the array of the API before April 2025 (relative URLs) or the object after it.
    static func normalize(_ article: Value) -> Value {
        guard case .object(var object) = article else { return article }
        var image: Value = .null
        switch object["multimedia"] {
        case .array(let media)?:
            let pictures = media.compactMap { entry -> JSONObject? in
                if case .object(let picture) = entry, picture["url"]?.stringValue != nil { return picture }
                return nil
            }
            let best = pictures.first { $0["subtype"]?.stringValue == "xlarge" } ?? pictures.first
            if let best, let url = best["url"]?.stringValue {
                image = picture(url: url.hasPrefix("http") ? url : "https://static01.nyt.com/" + url, best)
            }
        case .object(let media)?:
            if case .object(let main)? = media["default"] ?? media["thumbnail"], let url = main["url"]?.stringValue {
                image = picture(url: url, main)
            }
        default:
            break
        }
        object["image"] = image
        if case .array? = object["byline"] { object["byline"] = .object(JSONObject()) }
        return .object(object)
    }

    private static func picture(url: String, _ source: JSONObject) -> Value {
        var picture = JSONObject()
        picture["url"] = .string(url)
        picture["width"] = source["width"] ?? .null
        picture["height"] = source["height"] ?? .null
        return .object(picture)
    }
}
