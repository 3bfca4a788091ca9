import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

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
    static let respond = Parameter<WebhookResponseTime>(
        "respond", default: .whenSafe,
        doc:
            "whenSafe: answer once the request's elements are written by the sinks or kept by a committed checkpoint (at-least-once); immediately: once they are in the pipeline (at-most-once)."
    )
    static let queue = Parameter<Int>(
        "queue", default: 1000,
        doc: "How many elements may wait for the pipeline; past that, requests are answered 503 with Retry-After."
    ).atLeast(1)
    static let requestTimeout = Parameter<RxTimeInterval>(
        "requestTimeout", default: .seconds(10),
        doc:
            "A request must arrive whole within this of its connection opening (or of the previous answer); otherwise the connection is closed."
    ).atLeast(RxTimeInterval.milliseconds(1))
    static let maxConnections = Parameter<Int>(
        "maxConnections", default: 1024,
        doc:
            "Connections kept open at most; one more closes the one that has waited longest for a request (or is closed itself when every one is being answered)."
    ).atLeast(1)
}

/// When `httpServer` answers a request it took.
enum WebhookResponseTime: String, ParameterChoice {
    /// Once every element of the request is written by the sinks or kept by a committed checkpoint.
    case whenSafe
    /// As soon as the elements are in the pipeline, before they are written.
    case immediately
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
            {"accepted": N} once every element of the request is safe — written by the sinks (or \
            dropped by a filter), or held by an operator whose state a committed checkpoint keeps \
            (--state) — or, with respond: immediately, as soon as the elements are in the pipeline; \
            500 {"error": ...} when work on one of its elements failed; 503 with Retry-After: 1 when \
            the run stopped before its elements were safe, and for new requests once a signal \
            stops the run (the source then completes, so open windows are emitted and written); \
            400 {"error": ...} for a body \
            that is not JSON, naming the line; 401 without the right bearer token (when token is \
            set); 404 for another path; 405 for another method; 413 for a body over maxBodyBytes; \
            503 with Retry-After: 1 when queue elements already wait for the pipeline — nothing of \
            that request is taken, so a client that retries loses nothing, and memory stays bounded. \
            A request's elements are taken all or none. The source never completes; stop it with a \
            signal (or take, or --until). It needs the real clock; under rivulet test give its stream \
            an input instead. The address it listens on is logged at start. A connection that sends \
            nothing, half a header or a body shorter than its Content-Length is closed after \
            requestTimeout, and at most maxConnections are kept, so idle clients cannot use up the \
            process's file descriptors.
            """,
        parameters: [
            Key.address, Key.path, Key.paths, Key.token, Key.maxBodyBytes, Key.respond, Key.queue, Key.requestTimeout,
            Key.maxConnections,
        ],
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
        checkpointing: .stateless,
        delivery: Delivery(
            .atLeastOnce,
            "a request is answered 202 only once its elements are written or kept by a committed checkpoint, so a sender that retries what was not answered 2xx loses nothing (and may send some twice); with respond: immediately, at-most-once: a run killed after the answer loses what it had not written"
        ),
        factory: .source { parameters, context in
            // Validated above.
            let (host, port) = HTTPServerAddress.parse(parameters[Key.address]) ?? ("127.0.0.1", 8080)
            let settings = WebhookSettings(
                host: host, port: port, paths: Set(parameters[Key.paths] ?? [parameters[Key.path]]),
                token: parameters[Key.token], maxBodyBytes: parameters[Key.maxBodyBytes],
                queueLimit: parameters[Key.queue],
                limits: HTTPConnectionLimits(
                    requestTimeout: .nanoseconds(parameters[Key.requestTimeout].totalNanoseconds),
                    maxConnections: parameters[Key.maxConnections]))
            let respond = parameters[Key.respond]
            if let token = settings.token {
                context.shared(HTTPSession.self) { HTTPSession(mode: .live) }.redactor.add(token)
            }
            return PipelineSource { _ in HTTPServerSource.observable(settings, respond: respond, context: context) }
        }
    ).declaring { traits in
        // Its requests carry origins, which only the pipeline's thread may touch.
        traits.setsOrigins = { _ in true }
    }
}

/// `HOST:PORT` (`[::1]:9464` for IPv6), as the `httpServer` source and `run --metrics` take it.
public enum HTTPServerAddress {
    /// The host and port; nil when `text` is not `HOST:PORT` — a name, an IPv4 address or an
    /// IPv6 one in brackets (`*` is not an address: it was bound to one chosen by the resolver).
    public static func parse(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        if bracketed { host = String(host.dropFirst().dropLast()) }
        let punctuation: Set<Character> = bracketed ? [":", ".", "%"] : [".", "-", "_"]
        guard !host.isEmpty,
            host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || punctuation.contains($0) }),
            let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else {
            return nil
        }
        return (host, port)
    }
}

enum HTTPServerSource {
    static func observable(_ settings: WebhookSettings, respond: WebhookResponseTime, context: ComponentContext)
        -> Observable<Value>
    {
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
            let ending = context.shared(RunEnding.self) { RunEnding() }
            let server: WebhookServer
            do {
                server = try WebhookServer(settings: settings, queue: queue) { elements, answer in
                    scheduler.enqueue {
                        let (observer, lifetime) = target.value
                        defer { queue.release(elements.count) }
                        guard !lifetime.isDisposed else {
                            return answer(.retryLater("the run stopped before taking the request; try again"))
                        }
                        guard respond == .whenSafe else {
                            for element in elements { observer.on(.next(element)) }
                            return answer(.accepted(elements.count))
                        }
                        // The request is the origin of its elements: answered once nothing holds it.
                        let request = WebhookRequest(count: elements.count, ending: ending, answer: answer)
                        Origin.with(request) {
                            for element in elements { observer.on(.next(element)) }
                        }
                    }
                }
            } catch {
                observer.on(
                    .error(context.error("cannot listen on \(settings.host):\(settings.port): \(error)")))
                return
            }
            lifetime.onDispose { server.stop() }
            // A signal: new requests are refused, and the stream completes so that what the
            // pipeline holds (open windows) is emitted and written; after the run, the answers
            // still owed are sent before the process ends.
            let drains = context.shared(SourceDrains.self) { SourceDrains() }
            drains.add {
                server.refuseNew()
                if !lifetime.isDisposed { observer.on(.completed) }
            }
            drains.atEnd { server.waitForAnswers(timeout: .seconds(2)) }
            let paths = settings.paths.sorted().joined(separator: ", ")
            context.log("\(context.componentName): listening on http://\(settings.host):\(server.port) (\(paths))")
        }
    }
}

/// A request taken by `httpServer` as the origin of its elements: answered 202 when nothing
/// holds it any more (every element written, or dropped) or when a committed checkpoint keeps
/// what holds it; 500 if work on an element failed; 503 if the run stopped before.
final class WebhookRequest: Origin {
    private let count: Int
    private let ending: RunEnding
    private let answer: @Sendable (WebhookAnswer) -> Void
    private var failure: String?
    private var answered = false

    init(count: Int, ending: RunEnding, answer: @escaping @Sendable (WebhookAnswer) -> Void) {
        self.count = count
        self.ending = ending
        self.answer = answer
    }

    override func fail(_ error: any Error) {
        if failure == nil { failure = (error as? PipelineRuntimeError)?.message ?? "\(error)" }
    }

    override func checkpointed() {
        guard !answered, failure == nil else { return }
        answered = true
        answer(.accepted(count))
    }

    deinit {
        guard !answered else { return }
        if let failure {
            answer(.failed(Secrets.shared.redact(failure)))
        } else if ending.isAbandoned {
            answer(.retryLater("the run stopped before the request's elements were written; try again"))
        } else {
            answer(.accepted(count))
        }
    }
}
