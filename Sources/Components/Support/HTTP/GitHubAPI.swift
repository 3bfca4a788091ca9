import Foundation
import Pipeline
import Reactive

/// What `github.search` and `github.userRepos` share: the REST API's headers (media type,
/// version, User-Agent), an optional token, pagination by the Link header.
enum GitHubAPI {
    static let version = "2022-11-28"

    /// Parameters both sources take.
    static let parameters: [ParameterSpec] =
        [
            ParameterSpec("perPage", .int, default: 30, doc: "Items a page, 1 to 100."),
            APISource.baseURL("https://api.github.com"),
            APISource.keyVariable(
                "GITHUB_TOKEN", doc: "The environment variable holding a token (optional; GH_TOKEN is tried too)."),
        ] + PagedFetch.commonParameters

    static func check(_ parameters: ParameterValues) -> String? {
        if let perPage = parameters.int("perPage"), !(1...100).contains(perPage) {
            return "perPage must be between 1 and 100 (GitHub's limit), not \(perPage)"
        }
        return nil
    }

    /// A GitHub source: `path` and `query` per element, `items` out of a page body.
    static func source(
        _ parameters: ParameterValues, context: ComponentContext, items: @escaping (Value) throws -> [Value],
        isLastPage: ((FetchedPage) -> Bool)? = nil,
        request: @escaping (APISource, Value) throws -> (path: String, query: [(String, String)])
    ) throws -> PipelineSource {
        let api = try APISource(parameters: parameters, context: context)
        let token = api.key(parameters, fallbacks: ["GH_TOKEN"])
        let fetch = PagedFetch(
            setup: api.setup, pagination: .link, items: items, maxPages: parameters.int("maxPages"),
            isLastPage: isLastPage)
        let emit = EmitMode(rawValue: parameters.string("emit") ?? "items") ?? .items
        let perPage = parameters.int("perPage") ?? 30
        return fetch.source(emit: emit) { element in
            let (path, query) = try request(api, element)
            var headers = [
                ("Accept", "application/vnd.github+json"), ("X-GitHub-Api-Version", version),
                ("User-Agent", "rivulet"),
            ]
            if let token { headers.append(("Authorization", "Bearer \(token)")) }
            return HTTPRequestData(
                url: try api.url(path, query: query + [("per_page", String(perPage))]), headers: headers)
        }
    }
}
