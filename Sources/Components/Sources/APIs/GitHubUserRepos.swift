import Foundation
import Pipeline

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
        parameters: [
            ParameterSpec("user", .template, required: true, doc: "The user's login.", example: "\"{{ . }}\""),
            ParameterSpec("type", .oneOf(["owner", "all", "member"]), default: "owner", doc: "Which repositories."),
            ParameterSpec(
                "sort", .oneOf(["full_name", "created", "updated", "pushed"]), default: "full_name", doc: "The order."
            ),
        ] + GitHubAPI.parameters,
        primary: "user",
        example: """
            - flatMapLatest:
                github.userRepos: { user: "{{ . }}", sort: updated, emit: page }
            """,
        check: GitHubAPI.check,
        factory: .source { parameters, context in
            try GitHubAPI.source(
                parameters, context: context,
                items: { body in try ItemSelection.list(body, at: []) },
                request: { api, element in
                    let user = try api.query(parameters, [("user", "user")], element: element).first?.1 ?? ""
                    guard !user.isEmpty else { throw context.error("user is empty", element: element) }
                    let encoded = user.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? user
                    let query = try api.query(parameters, [("type", "type"), ("sort", "sort")], element: element)
                    return ("/users/\(encoded.replacingOccurrences(of: "/", with: "%2F"))/repos", query)
                })
        })
}
