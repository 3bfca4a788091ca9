import Foundation
@_spi(Components) import Pipeline

private enum Affiliation: String, ParameterChoice {
    case owner, all, member
}
private enum RepositoryListOrder: String, ParameterChoice {
    case fullName = "full_name"
    case created, updated, pushed
}
private enum Key {
    static let user = Parameter<Template>("user", doc: "The user's login.", example: "\"{{ . }}\"")
    static let type = Parameter<Affiliation?>(
        "type", doc: "Which repositories; without it, type is not sent (GitHub's default is owner).", example: "all")
    static let sort = Parameter<RepositoryListOrder?>(
        "sort", doc: "The order; without it, sort is not sent (GitHub's default is full_name).", example: "updated")
    static let validateStatus = Parameter<Bool>(
        "validateStatus", default: true,
        doc:
            "false: an answer of any status is a page, as a client that does not check it (RxAlamofire's requestJSON); a body that is not a list (a 404's {message}) is then no items, and nothing is retried for its status."
    )
}

extension BuiltinComponents {
    /// `github.userRepos: {user: …}` — a GitHub user's public repositories.
    public static let githubUserRepos = ComponentSpec(
        name: "github.userRepos",
        summary: "Lists a GitHub user's public repositories, following the Link header.",
        docs: """
            Headers, token and rate limits as github.search. An unknown user is GitHub's 404, which \
            is not retried: inside flatMapLatest with onError: skip it goes to the errors side stream. \
            A user with no repositories gives no items (emit: page or all gives one empty list, so a \
            table can say "no repositories"). With validateStatus: false an unknown user is an empty \
            list too, as in an app that reads every answer's JSON.
            """,
        parameters: [Key.user, Key.type, Key.sort, Key.validateStatus] + GitHubAPI.parameters,
        primary: Key.user,
        example: """
            - flatMapLatest:
                github.userRepos: { user: "{{ . }}", sort: updated, emit: page }
            """,
        validate: GitHubAPI.validate,
        checkpointing: PagedFetch.checkpointing,
        delivery: PagedFetch.delivery,
        factory: .source { parameters, context in
            let (user, type, sort) = (parameters[Key.user], parameters[Key.type], parameters[Key.sort])
            let validates = parameters[Key.validateStatus]
            return try GitHubAPI.source(
                parameters, context: context,
                items: { body in
                    if case .array = body {} else if !validates { return [] }
                    return try ItemSelection.list(body, at: [])
                },
                acceptsEveryStatus: !validates,
                request: { api, element in
                    let login = try api.query([("user", user)], element: element).first?.1 ?? ""
                    guard !login.isEmpty else { throw context.error("user is empty", element: element) }
                    let encoded = login.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? login
                    var query: [(String, String)] = []
                    if let type { query.append(("type", type.rawValue)) }
                    if let sort { query.append(("sort", sort.rawValue)) }
                    return ("/users/\(encoded.replacingOccurrences(of: "/", with: "%2F"))/repos", query)
                })
        })
}
