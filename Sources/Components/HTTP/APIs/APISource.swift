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

    /// The API source declared by `api`, built with its checked `parameters`.
    init(_ api: APIParameters, parameters: ParameterValues, context: ComponentContext) throws {
        self.context = context
        setup = try PagedFetch.setup(parameters, context: context)
        base = Self.trimmedBase(parameters[api.baseURL])
    }

    private static func trimmedBase(_ url: String) -> String {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// Checks that `baseURL` is an absolute URL, at its value.
    static func validate(_ api: APIParameters, _ values: ParameterValues, _ validation: ComponentValidation) {
        let base = trimmedBase(values[api.baseURL])
        if URLComponents(string: base)?.host == nil {
            validation.error(
                "baseURL '\(base)' is not an absolute URL (such as http://127.0.0.1:8080)", at: api.baseURL, in: values)
        }
    }

    /// The key from the variable `keyVariable` names, or else from `fallbacks` (nil when unset or
    /// empty); remembered as a secret, so no recording, log or error shows it. Replays and tests
    /// send no key: they need none, and their requests and messages then do not depend on the
    /// environment.
    func key(_ keyVariable: String, fallbacks: [String] = []) -> String? {
        guard isLive else { return nil }
        let environment = ProcessInfo.processInfo.environment
        for name in [keyVariable] + fallbacks {
            if let value = environment[name], !value.isEmpty {
                setup.redactor.add(value)
                return value
            }
        }
        return nil
    }

    /// Whether requests go to the network (so a missing key matters).
    var isLive: Bool { setup.transport is LiveHTTPTransport || setup.transport is RecordingHTTPTransport }

    /// Renders `templates` for `element` as query pairs under the API's own parameter names
    /// (absent templates, null and empty values left out).
    func query(_ templates: [(name: String, template: Template?)], element: Value) throws -> [(String, String)] {
        let scope = context.makeScope()
        var pairs: [(String, String)] = []
        for (name, template) in templates {
            guard let template, let text = try Self.text(of: template, element, scope: scope, context: context),
                !text.isEmpty
            else { continue }
            pairs.append((name, text))
        }
        return pairs
    }

    /// A template's text for `element` (nil when it renders null).
    static func text(
        of template: Template, _ element: Value, scope: EvaluationScope, context: ComponentContext
    ) throws -> String? {
        let value = try context.render(template, element, in: scope)
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

/// The parameters every API source declares with its own defaults: where the API is, the
/// environment variable holding its key, and the paging and retry parameters of HTTP sources.
struct APIParameters {
    /// Where the API is.
    let baseURL: Parameter<String>
    /// The variable holding the key.
    let keyVariable: Parameter<String>

    /// The parameters of an API at `url` whose key is in `variable` (described by `keyDoc`).
    init(baseURL url: String, keyVariable variable: String, keyDoc: String) {
        baseURL = Parameter(
            "baseURL", default: url, doc: "Where the API is; tests point it at a local server.",
            example: "http://127.0.0.1:8080")
        keyVariable = Parameter("keyVariable", default: variable, doc: keyDoc)
    }

    /// The declarations, with the paging and retry parameters after them.
    var all: [any ParameterDeclaration] { [baseURL, keyVariable] + PagedFetch.commonParameters }
}
