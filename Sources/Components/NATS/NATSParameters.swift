import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// The parameters the `nats` source and sink share: where the server is and how to log in.
enum NATSParameters {
    static let url = Parameter<String?>(
        "url",
        doc:
            "The server, nats://HOST:PORT; several, comma-separated, for a cluster. Default: $NATS_URL, else nats://127.0.0.1:4222.",
        example: "nats://127.0.0.1:4222")
    static let creds = Parameter<String?>(
        "creds", doc: "A credentials file (JWT and NKey seed), relative to the pipeline file.", example: "nats.creds")
    static let token = Parameter<String?>(
        "token", doc: "A token to log in with; write it from the environment.", example: "\"${NATS_TOKEN}\"")
    static let user = Parameter<String?>("user", doc: "A user name to log in with.", example: "orders")
    static let password = Parameter<String?>(
        "password", doc: "The user's password; write it from the environment.", example: "\"${NATS_PASSWORD}\"")
    static let lostAfter = Parameter<RxTimeInterval>(
        "lostAfter", default: .seconds(60),
        doc: "How long the run waits for a server that went away (reconnecting all the while) before it fails."
    ).above(RxTimeInterval.zero)

    static let connection: [any ParameterDeclaration] = [url, creds, token, user, password, lostAfter]

    /// Checks what the file says of the connection.
    static func validate(_ values: ParameterValues, _ validation: ComponentValidation) {
        if let url = values[url] {
            for part in url.split(separator: ",", omittingEmptySubsequences: false) {
                let text = part.trimmingCharacters(in: .whitespaces)
                if !(text.hasPrefix("nats://") || text.hasPrefix("tls://")) || text.count <= 7 {
                    validation.error(
                        "url '\(text)' is not a NATS URL", at: Self.url, in: values,
                        note: "write nats://HOST:PORT, several separated by commas")
                }
            }
        }
        for secret in [token, password] {
            if let text = values[secret], text.isEmpty {
                validation.error(
                    "\(secret.spec.name) is empty (an environment variable that is not set?)", at: secret, in: values,
                    note: "write ${NAME:?message} to fail when NAME is not set")
            }
        }
        if values.has(password) && !values.has(user) {
            validation.error("password needs user", at: password, in: values)
        }
        if let file = values[creds], access(validation.resolvePath(file), R_OK) != 0 {
            validation.error(
                "cannot read the credentials file '\(file)'", at: creds, in: values,
                note: "looked for \(validation.resolvePath(file))")
        }
    }

    /// The endpoint the file describes; secrets are added to the redactor.
    static func endpoint(_ values: ParameterValues, context: ComponentContext) -> NATSEndpoint {
        let written =
            values[url] ?? ProcessInfo.processInfo.environment["NATS_URL"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "nats://127.0.0.1:4222"
        for secret in [values[token], values[password]].compactMap({ $0 }) { Secrets.shared.add(secret) }
        return NATSEndpoint(
            urls: written.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) },
            credentialsFile: values[creds].map { context.resolvePath($0) }, token: values[token], user: values[user],
            password: values[password], lostAfter: values[lostAfter])
    }
}
