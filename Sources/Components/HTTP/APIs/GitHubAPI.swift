import Foundation
import Pipeline
import Reactive

/// What `github.search` and `github.userRepos` share: the REST API's headers (media type,
/// version, User-Agent), an optional token, pagination by the Link header.
enum GitHubAPI {
    static let version = "2022-11-28"

    /// Items a page.
    static let perPage = Parameter<Int?>(
        "perPage", doc: "Items a page, 1 to 100; without it, per_page is not sent (GitHub's default is 30).",
        example: "100")
    static let api = APIParameters(
        baseURL: "https://api.github.com", keyVariable: "GITHUB_TOKEN",
        keyDoc: "The environment variable holding a token (optional; GH_TOKEN is tried too).")

    /// Parameters both sources take.
    static let parameters: [any ParameterDeclaration] = [perPage] + api.all

    static func validate(_ values: ParameterValues, _ validation: ComponentValidation) {
        if let count = values[perPage], !(1...100).contains(count) {
            validation.error(
                "perPage must be between 1 and 100 (GitHub's limit), not \(count)", at: perPage, in: values)
        }
        APISource.validate(api, values, validation)
    }

    /// A GitHub source: `path` and `query` per element, `items` out of a page body.
    static func source(
        _ parameters: ParameterValues, context: ComponentContext, items: @escaping (Value) throws -> [Value],
        isLastPage: ((FetchedPage) -> Bool)? = nil, acceptsEveryStatus: Bool = false,
        request: @escaping (APISource, Value) throws -> (path: String, query: [(String, String)])
    ) throws -> PipelineSource {
        let source = try APISource(api, parameters: parameters, context: context)
        let token = source.key(parameters[api.keyVariable], fallbacks: ["GH_TOKEN"])
        var setup = source.setup
        setup.acceptsEveryStatus = acceptsEveryStatus
        let fetch = PagedFetch(
            setup: setup, pagination: .link, items: items, maxPages: parameters[PagedFetch.maxPages],
            isLastPage: isLastPage)
        let perPage = parameters[perPage]
        return fetch.source(emit: parameters[PagedFetch.emit]) { element in
            let (path, query) = try request(source, element)
            var headers = [
                ("Accept", "application/vnd.github+json"), ("X-GitHub-Api-Version", version),
                ("User-Agent", "rivulet"),
            ]
            if let token { headers.append(("Authorization", "Bearer \(token)")) }
            return HTTPRequestData(
                url: try source.url(path, query: query + (perPage.map { [("per_page", String($0))] } ?? [])),
                headers: headers)
        }
    }
}
