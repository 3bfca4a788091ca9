import Foundation
@_spi(Host) import Pipeline
import Reactive

private enum Key {
    static let address = Parameter<String>(
        "address", default: "127.0.0.1:8080",
        doc: "HOST:PORT to listen on; only that address (0.0.0.0 must be written to listen on every interface).")
    static let path = Parameter<String>("path", default: "/", doc: "The path that takes POSTs.", example: "/orders")
    static let paths = Parameter<[String]?>(
        "paths", doc: "Several paths that take POSTs (instead of path).", example: "[/orders, /refunds]")
    static let token = Parameter<String?>(
        "token",
        doc: "A bearer token every request must carry (Authorization: Bearer TOKEN); write it from the environment.",
        example: "\"${WEBHOOK_TOKEN}\"")
    static let maxBodyBytes = Parameter<Int>(
        "maxBodyBytes", default: 1_048_576, doc: "The largest body accepted; a larger one is answered 413."
    ).atLeast(1)
    static let queue = Parameter<Int>(
        "queue", default: 1000,
        doc: "How many elements may wait for the pipeline; past that, requests are answered 503 with Retry-After."
    ).atLeast(1)
}

extension BuiltinComponents {
    /// `httpServer: {address, path}` — elements POSTed by other systems (webhooks).
    public static let httpServer = ComponentSpec(
        name: "httpServer",
        summary: "Listens for webhooks: each POSTed JSON value, array item or JSON Lines line is an element.",
        docs: """
            Listens on address (127.0.0.1:8080 by default, never another address unless written) for \
            POST requests to path (or paths). A body that is one JSON value is one element, a JSON \
            array one element per item, JSON Lines one element per line. Answers: 202 \
            {"accepted": N} once the elements are in the pipeline; 400 {"error": ...} for a body \
            that is not JSON, naming the line; 401 without the right bearer token (when token is \
            set); 404 for another path; 405 for another method; 413 for a body over maxBodyBytes; \
            503 with Retry-After: 1 when queue elements already wait for the pipeline — nothing of \
            that request is taken, so a client that retries loses nothing, and memory stays bounded. \
            A request's elements are taken all or none. The source never completes; stop it with a \
            signal (or take, or --until). It needs the real clock; under rivulet test give its stream \
            an input instead. The address it listens on is logged at start.
            """,
        parameters: [Key.address, Key.path, Key.paths, Key.token, Key.maxBodyBytes, Key.queue],
        example: "source: { httpServer: { address: \"127.0.0.1:8080\", path: /orders, token: \"${WEBHOOK_TOKEN}\" } }",
        validate: { values, validation in
            if HTTPServerAddress.parse(values[Key.address]) == nil {
                validation.error(
                    "address '\(values[Key.address])' is not HOST:PORT", at: Key.address, in: values,
                    note: "for example 127.0.0.1:8080")
            }
            for path in values[Key.paths] ?? [values[Key.path]] where !path.hasPrefix("/") {
                validation.error(
                    "path '\(path)' must start with /", at: values.has(Key.paths) ? Key.paths : Key.path, in: values)
            }
            if let token = values[Key.token], token.isEmpty {
                validation.error(
                    "token is empty (an environment variable that is not set?)", at: Key.token, in: values,
                    note: "write ${NAME:?message} to fail when NAME is not set")
            }
        },
        delivery: Delivery(
            .atMostOnce,
            "a request is answered 202 once its elements are in the pipeline, before they are written: a run killed then loses them (a sender retries only what was not answered)"
        ),
        factory: .source { parameters, context in
            // Validated above.
            let (host, port) = HTTPServerAddress.parse(parameters[Key.address]) ?? ("127.0.0.1", 8080)
            let settings = WebhookSettings(
                host: host, port: port, paths: Set(parameters[Key.paths] ?? [parameters[Key.path]]),
                token: parameters[Key.token], maxBodyBytes: parameters[Key.maxBodyBytes],
                queueLimit: parameters[Key.queue])
            if let token = settings.token {
                context.shared(HTTPSession.self) { HTTPSession(mode: .live) }.redactor.add(token)
            }
            return PipelineSource { _ in HTTPServerSource.observable(settings, context: context) }
        })
}

/// `HOST:PORT` (`[::1]:9464` for IPv6), as the `httpServer` source and `run --metrics` take it.
@_spi(Host) public enum HTTPServerAddress {
    /// The host and port; nil when `text` is not `HOST:PORT`.
    public static func parse(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        return (host, port)
    }
}

enum HTTPServerSource {
    static func observable(_ settings: WebhookSettings, context: ComponentContext) -> Observable<Value> {
        Observable { observer, lifetime in
            guard let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler else {
                observer.on(
                    .error(
                        context.error(
                            "httpServer listens on the real clock only; under rivulet test give this stream an input")))
                return
            }
            let target = SchedulerBound((observer, lifetime))
            let queue = WebhookQueue(limit: settings.queueLimit)
            let server: WebhookServer
            do {
                server = try WebhookServer(settings: settings, queue: queue) { elements, accepted in
                    scheduler.enqueue {
                        let (observer, lifetime) = target.value
                        defer { queue.release(elements.count) }
                        guard !lifetime.isDisposed else { return }
                        for element in elements { observer.on(.next(element)) }
                        accepted()
                    }
                }
            } catch {
                observer.on(
                    .error(context.error("cannot listen on \(settings.host):\(settings.port): \(error)")))
                return
            }
            lifetime.onDispose { server.stop() }
            let paths = settings.paths.sorted().joined(separator: ", ")
            context.log("\(context.componentName): listening on http://\(settings.host):\(server.port) (\(paths))")
        }
    }
}
