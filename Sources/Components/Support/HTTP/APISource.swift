import Foundation
import Pipeline
import Reactive

/// What the API sources (`nyt.*`, `github.*`, `foursquare.search`) share: templated query
/// parameters, a base URL that tests point at a local server, and a key from the environment.
struct APISource {
    let context: ComponentContext
    let setup: HTTPClientSetup
    /// The API's root URL, without a trailing slash.
    let base: String

    init(parameters: ParameterValues, context: ComponentContext) throws {
        self.context = context
        setup = try HTTPClientSetup(parameters: parameters, context: context)
        var base = parameters.string("baseURL") ?? ""
        while base.hasSuffix("/") { base.removeLast() }
        guard URLComponents(string: base)?.host != nil else {
            throw context.error("baseURL '\(base)' is not an absolute URL (such as http://127.0.0.1:8080)")
        }
        self.base = base
    }

    /// The `baseURL` parameter.
    static func baseURL(_ url: String) -> ParameterSpec {
        ParameterSpec(
            "baseURL", .string, default: .string(url), doc: "Where the API is; tests point it at a local server.",
            example: "http://127.0.0.1:8080")
    }

    /// The parameter naming a key's environment variable.
    static func keyVariable(_ variable: String, doc: String) -> ParameterSpec {
        ParameterSpec("keyVariable", .string, default: .string(variable), doc: doc)
    }

    /// The key from the variable the `keyVariable` parameter names (nil when unset or empty);
    /// remembered as a secret, so no recording, log or error shows it. Replays and tests send no
    /// key: they need none, and their requests and messages then do not depend on the environment.
    func key(_ parameters: ParameterValues, fallbacks: [String] = []) -> String? {
        guard isLive else { return nil }
        let environment = ProcessInfo.processInfo.environment
        for name in [parameters.string("keyVariable")].compactMap({ $0 }) + fallbacks {
            if let value = environment[name], !value.isEmpty {
                setup.redactor.add(value)
                return value
            }
        }
        return nil
    }

    /// Whether requests go to the network (so a missing key matters).
    var isLive: Bool { setup.transport is LiveHTTPTransport || setup.transport is RecordingHTTPTransport }

    /// Renders the templates of `parameters` named in `names` for `element`, as query pairs
    /// (`nil` and empty values left out), under the API's own parameter names.
    func query(_ parameters: ParameterValues, _ names: [(parameter: String, query: String)], element: Value) throws
        -> [(String, String)]
    {
        let scope = context.makeScope()
        var pairs: [(String, String)] = []
        for (parameter, name) in names {
            guard let entry = parameters.entries[parameter],
                let text = try Self.text(of: entry, element, scope: scope, context: context), !text.isEmpty
            else { continue }
            pairs.append((name, text))
        }
        return pairs
    }

    /// A parameter's text for `element`: a template rendered (null: none), anything else as written.
    static func text(
        of entry: ParameterValues.Entry, _ element: Value, scope: EvaluationScope, context: ComponentContext
    ) throws -> String? {
        let value: Value
        switch entry {
        case .template(let template): value = try context.render(template, element, in: scope)
        case .string(let string): value = .string(string)
        case .int(let int): value = .int(int)
        case .number(let number): value = .double(number)
        case .bool(let bool): value = .bool(bool)
        case .value(let written): value = written
        default: return nil
        }
        if case .null = value { return nil }
        return value.text
    }

    /// `base` + `path` with `query`.
    func url(_ path: String, query: [(String, String)]) throws -> String {
        guard var components = URLComponents(string: base + path) else {
            throw context.error("'\(base + path)' is not a URL")
        }
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        // '+' is a space to these APIs' form decoding; encode it so a literal plus survives.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.string ?? base + path
    }
}
