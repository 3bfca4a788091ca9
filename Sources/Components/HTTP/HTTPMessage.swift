import Foundation
@_spi(Components) import Pipeline

/// An HTTP request as a source makes it.
public struct HTTPRequestData: Sendable, Equatable {
    /// GET, POST, …
    public var method: String
    /// The absolute URL, query included.
    public var url: String
    /// Request headers, in order.
    public var headers: [(String, String)]
    /// The body, if any.
    public var body: [UInt8]?
    /// The largest response body accepted; a larger one is an error, and no more of it is read.
    public var maximumResponseBytes: Int?

    /// A request.
    public init(
        method: String = "GET", url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        maximumResponseBytes: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// The query parameters with the values of secret ones (`api-key`, `token`, …) replaced by
    /// `REDACTED`, for messages and test reports.
    public var redactedQueryItems: [(String, String)] {
        queryItems.map { name, value in
            (name, SecretRedactor.secretQueryNames.contains(name.lowercased()) ? SecretRedactor.placeholder : value)
        }
    }

    /// Same method, URL, headers and body.
    public static func == (a: HTTPRequestData, b: HTTPRequestData) -> Bool {
        a.method == b.method && a.url == b.url && a.body == b.body
            && a.headers.map { "\($0.0):\($0.1)" } == b.headers.map { "\($0.0):\($0.1)" }
    }

    /// The path of the URL ("/" when it has none).
    public var path: String { URLComponents(string: url)?.percentEncodedPath.nonEmpty ?? "/" }

    /// The query parameters of the URL, decoded, in order.
    public var queryItems: [(String, String)] {
        (URLComponents(string: url)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }
    }
}

/// An HTTP response, whole.
public struct HTTPResponseData: Sendable {
    /// The status code.
    public var status: Int
    /// Response headers, in order.
    public var headers: [(String, String)]
    /// The body.
    public var body: [UInt8]
    /// The URL that answered (after redirects).
    public var url: String

    /// A response.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], url: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The first header named `name`, compared without case.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// Why a request failed before a response arrived.
public struct HTTPTransportError: Error, Sendable, CustomStringConvertible {
    /// What happened (connection refused, reset, timed out, …).
    public var message: String
    /// Whether trying again may help.
    public var isRetryable: Bool

    /// An error.
    public init(_ message: String, isRetryable: Bool = true) {
        self.message = message
        self.isRetryable = isRetryable
    }

    /// The message.
    public var description: String { message }
}

/// Keeps keys and tokens out of everything rivulet writes: URLs in errors and logs, recordings.
public final class SecretRedactor: @unchecked Sendable {
    /// What a secret is replaced by.
    public static let placeholder = "REDACTED"
    /// Query parameters that carry secrets, compared without case.
    public static let secretQueryNames: Set<String> = [
        "api-key", "api_key", "apikey", "key", "token", "access_token", "client_id", "client_secret", "oauth_token",
        "signature", "password",
    ]
    /// Headers that carry secrets, compared without case.
    public static let secretHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "x-api-key", "cookie", "set-cookie",
    ]

    /// A redactor; secret values are the process's (`Secrets.shared`), names always count.
    public init() {}

    /// Remembers a secret value, so it is masked wherever rivulet writes it.
    public func add(_ secret: String) {
        Secrets.shared.add(secret)
    }

    /// `text` with every known secret value, in any of its encodings, replaced.
    public func redact(_ text: String) -> String {
        Secrets.shared.redact(text)
    }

    /// `url` with secret query parameters (by name and by value) replaced.
    public func redact(url: String) -> String {
        guard var components = URLComponents(string: url), let items = components.queryItems else {
            return redact(url)
        }
        components.queryItems = items.map { item in
            Self.secretQueryNames.contains(item.name.lowercased())
                ? URLQueryItem(name: item.name, value: Self.placeholder) : item
        }
        return redact(components.string ?? url)
    }

    /// Whether the header `name` carries a secret.
    public static func isSecretHeader(_ name: String) -> Bool { secretHeaderNames.contains(name.lowercased()) }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}

/// Reading what an API says went wrong, and what a body looks like.
enum HTTPBody {
    /// The API's own error message in a JSON error body: GitHub's and Foursquare's `message`,
    /// NYT's gateway `fault.faultstring`, `error`, `detail`, `errors[0].message`.
    static func apiMessage(_ body: [UInt8]) -> String? {
        guard case .object(let object)? = try? JSONParser.parse(body) else { return nil }
        if let message = object["message"]?.stringValue, !message.isEmpty {
            if case .array(let errors)? = object["errors"], case .object(let first)? = errors.first,
                let detail = first["message"]?.stringValue ?? first["code"]?.stringValue
            {
                return "\(message) (\(detail))"
            }
            return message
        }
        if case .object(let fault)? = object["fault"], let text = fault["faultstring"]?.stringValue { return text }
        if let text = object["error"]?.stringValue { return text }
        if case .object(let error)? = object["error"], let text = error["message"]?.stringValue { return text }
        if let text = object["detail"]?.stringValue { return text }
        if case .object(let meta)? = object["meta"], let text = meta["errorDetail"]?.stringValue { return text }
        return nil
    }

    /// The first bytes of a body, printable, for error messages.
    static func preview(_ body: [UInt8], limit: Int = 80) -> String {
        if body.isEmpty { return "an empty body" }
        // Masked before it is cut: a secret cut short would no longer be recognised.
        // (Of the first few KB only: enough for any secret that starts within the preview.)
        let whole = Secrets.shared.redact(String(decoding: body.prefix(limit + 4_096), as: UTF8.self))
        let text = whole.prefix(limit).map { $0.isNewline ? " " : String($0) }.joined()
        let quoted = "\"" + text + (whole.count > limit || body.count > limit + 4_096 ? "…" : "") + "\""
        return "\(body.count) bytes starting \(quoted)"
    }

    /// The reason phrase of common statuses.
    static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 422: "Unprocessable Entity"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
