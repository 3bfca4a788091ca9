import Foundation
@_spi(Components) import Pipeline

private enum RepositoryOrder: String, ParameterChoice {
    case bestMatch = "best-match"
    case stars, forks
    case helpWantedIssues = "help-wanted-issues"
    case updated
}
private enum Direction: String, ParameterChoice {
    case desc, asc
}
private enum Key {
    static let q = Parameter<Template>(
        "q", doc: "The query, qualifiers included.", example: "\"language:{{ . }} stars:>100\"")
    static let sort = Parameter<RepositoryOrder>("sort", default: .bestMatch, doc: "The order.")
    static let order = Parameter<Direction>("order", default: .desc, doc: "With sort.")
    static let page = Parameter<Template?>(
        "page", doc: "The page to start from (1 is the first), for a page counter kept by the pipeline.",
        example: "\"{{ . }}\"")
}

extension BuiltinComponents {
    /// `github.search: {q: …}` — GitHub repository search.
    public static let githubSearch = ComponentSpec(
        name: "github.search",
        summary: "Searches GitHub repositories (q with qualifiers such as language:swift), following the Link header.",
        docs: """
            Sends the API's media type, version header (2022-11-28) and a User-Agent; a token from \
            GITHUB_TOKEN (or GH_TOKEN), if set, as a bearer token — without one GitHub allows 10 \
            searches a minute. Pages follow the Link header's rel="next" and stop at GitHub's cap of \
            1,000 results rather than asking for a page it refuses. Rate-limit answers (403 or 429 \
            with x-ratelimit-remaining: 0, or a Retry-After) are waited out and retried. Each item \
            is a repository as the API gives it (full_name, html_url, stargazers_count, language, \
            owner.login, …).
            """,
        parameters: [Key.q, Key.sort, Key.order, Key.page] + GitHubAPI.parameters,
        primary: Key.q,
        example: """
            - scanPaginate:
                source: { github.search: { q: "language:swift", sort: stars, perPage: 10 } }
            """,
        validate: GitHubAPI.validate,
        checkpointing: PagedFetch.checkpointing,
        delivery: PagedFetch.delivery,
        factory: .source { parameters, context in
            let perPage = parameters[GitHubAPI.perPage] ?? 30
            let (q, sort, order) = (parameters[Key.q], parameters[Key.sort], parameters[Key.order])
            let page = parameters[Key.page]
            return try GitHubAPI.source(
                parameters, context: context,
                items: { body in try ItemSelection.list(body, at: ["items"]) },
                isLastPage: { page in
                    var total = Int.max
                    if case .object(let root) = page.body, case .int(let count)? = root["total_count"] {
                        total = count
                    }
                    return (page.index + 1) * perPage >= min(total, 1000)
                },
                request: { api, element in
                    var query = try api.query([("q", q)], element: element)
                    if sort != .bestMatch {
                        query.append(("sort", sort.rawValue))
                        query.append(("order", order.rawValue))
                    }
                    if let page { query += try api.query([("page", page)], element: element) }
                    return ("/search/repositories", query)
                })
        })
}
