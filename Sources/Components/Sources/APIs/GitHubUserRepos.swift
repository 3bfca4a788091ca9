import Foundation
@_spi(Host) import Pipeline

private enum Affiliation: String, ParameterChoice {
    case owner, all, member
}
private enum RepositoryListOrder: String, ParameterChoice {
    case fullName = "full_name"
    case created, updated, pushed
}
private enum Key {
    static let user = Parameter<Template>("user", doc: "The user's login.", example: "\"{{ . }}\"")
    static let type = Parameter<Affiliation>("type", default: .owner, doc: "Which repositories.")
    static let sort = Parameter<RepositoryListOrder>("sort", default: .fullName, doc: "The order.")
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
            table can say "no repositories").
            """,
        parameters: [Key.user, Key.type, Key.sort] + GitHubAPI.parameters,
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
            return try GitHubAPI.source(
                parameters, context: context,
                items: { body in try ItemSelection.list(body, at: []) },
                request: { api, element in
                    let login = try api.query([("user", user)], element: element).first?.1 ?? ""
                    guard !login.isEmpty else { throw context.error("user is empty", element: element) }
                    let encoded = login.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? login
                    let query = [("type", type.rawValue), ("sort", sort.rawValue)]
                    return ("/users/\(encoded.replacingOccurrences(of: "/", with: "%2F"))/repos", query)
                })
        })
}
