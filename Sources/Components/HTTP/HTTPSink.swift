import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let url = Parameter<Template>(
        "url", doc: "Where each element (or batch) is sent; a template over it.",
        example: "\"https://hooks.example.com/orders/{{ .id }}\"")
    static let method = Parameter<String>("method", default: "POST", doc: "The HTTP method.")
    static let headers = Parameter<ParameterMap<Template>?>(
        "headers", doc: "Request headers (templates).", example: "{ Authorization: \"Bearer ${HOOK_TOKEN}\" }")
    static let body = Parameter<Template?>(
        "body",
        doc:
            "The body, a template over the element (or the batch, a list); a value that is not a string is sent as JSON. Default: the element (or batch) as JSON.",
        example: "\"{{ {text: .title} }}\"")
    static let batchCount = Parameter<Int>("count", default: 100, doc: "Elements per request at most.").atLeast(1)
    static let batchPeriod = Parameter<RxTimeInterval>(
        "period", default: .seconds(1), doc: "The longest an element waits for its batch to fill."
    ).above(RxTimeInterval.zero)
    static let batch = Parameter<ParameterValues?>.object(
        "batch", [batchCount, batchPeriod],
        doc: "Send elements in batches (a JSON list each) instead of one request each.",
        example: "{ count: 50, period: 2s }")
    static let timeout = Parameter<RxTimeInterval>(
        "timeout", default: .seconds(30), doc: "The longest one attempt may take."
    ).above(RxTimeInterval.zero)
}

extension BuiltinComponents {
    /// `http: {url: …}` (a sink) — sends elements to a URL.
    public static let httpSink = ComponentSpec(
        name: "http",
        summary: "Sends each element, or batches of them, to a URL: templated URL, headers and body; retries.",
        docs: """
            Requests go one at a time, in order: an element is sent once those before it were answered. \
            A 2xx answer is success. Retries, Retry-After and rate limits are handled as for the http \
            source (see retry): connection errors, 5xx and 429 are tried again, other 4xx are not. A \
            request that fails for good fails the run, or with onError: skip is dropped, or with onError: \
            errors goes to ID.errors (the element, or the batch as a list). The run ends once every \
            element was answered. Secrets in headers and URLs never appear in messages. rivulet run \
            --record and --replay record and replay its requests; under rivulet test its requests are \
            answered from the case's http entries (and checked by expectRequests), and what it \
            receives is recorded, as for every sink.
            """,
        parameters: [Key.url, Key.method, Key.headers, Key.body, Key.batch, Key.timeout, RetryPolicy.parameter],
        primary: Key.url,
        example: "sink: { http: { url: \"https://hooks.example.com/orders\", batch: { count: 50, period: 1s } } }",
        validate: { values, validation in
            let written = values[Key.url].source
            if !written.contains("{{"), !HTTPSourceRequest.isAbsolute(written) {
                validation.error("url '\(written)' is not an absolute http(s) URL", at: Key.url, in: values)
            }
        },
        checkpointing: .restartsWork(
            "the requests not answered at the last checkpoint (the one in flight, those queued and the batch "
                + "being filled are kept in it, and sent again in order on restart)"),
        delivery: Delivery(
            .atLeastOnce,
            "a request not answered 2xx is tried again; a durable source's message is acknowledged once its request was answered 2xx"
        ),
        elementErrors: true,
        factory: .sink { parameters, context in
            let batch = parameters[Key.batch]
            return try HTTPSink(
                url: parameters[Key.url], method: parameters[Key.method].uppercased(),
                headers: parameters[Key.headers]?.pairs ?? [], body: parameters[Key.body],
                batch: batch.map { ($0[Key.batchCount], $0[Key.batchPeriod]) },
                setup: HTTPClientSetup(
                    timeout: parameters[Key.timeout], retry: parameters[RetryPolicy.parameter], context: context),
                context: context)
        }
    ).declaring { traits in
        traits.runsUnderTests = true
    }
}

/// The `http` sink: a queue of elements (or batches) sent one request at a time. The run waits
/// for the queue to empty (`AsynchronousSink`). Each element keeps the messages behind it until
/// its request was answered with success (`OriginKeepingSink`), and fails them when it was not.
final class HTTPSink: AsynchronousSink, OriginKeepingSink {
    private let url: Template
    private let method: String
    private let headers: [(key: String, value: Template)]
    private let body: Template?
    private let batch: (count: Int, period: RxTimeInterval)?
    private let setup: HTTPClientSetup
    private let context: ComponentContext
    private var filling: [Value] = []
    private var fillingOrigins: [Origin] = []
    private let batchTimer = SerialDisposable()
    private var queue: [(value: Value, origin: Origin?)] = []
    private var inFlight: (any Disposable)?
    private var ended = false
    private var fail: ((any Error) -> Void)?
    private var finished: (() -> Void)?

    init(
        url: Template, method: String, headers: [(key: String, value: Template)], body: Template?,
        batch: (Int, RxTimeInterval)?, setup: HTTPClientSetup, context: ComponentContext
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.batch = batch
        self.setup = setup
        self.context = context
        restored = context.restoredState
        // The elements not answered yet: the sources have moved on past them.
        let closed = StateBox(Value.null)
        self.closed = closed
        context.keepState { [weak self] in self?.unanswered() ?? closed.value }
    }

    /// What the checkpoint the run resumes from kept: sent first, once the sink starts.
    private var restored: Value?
    /// What was not answered when the sink closed, for the run's last checkpoint.
    private var closed: StateBox<Value>?

    /// The elements not answered yet, for a checkpoint: those queued (the first one in flight)
    /// and the batch being filled.
    private func unanswered() -> Value {
        Value(stateRecord: [("queue", .array(queue.map(\.value))), ("filling", .array(filling))])
    }

    func start(failing fail: @escaping (any Error) -> Void) {
        self.fail = fail
        guard let restored else { return }
        self.restored = nil
        for value in restored["queue"]?.arrayValue ?? [] { queue.append((value, nil)) }
        for element in restored["filling"]?.arrayValue ?? [] { try? receive(.next(element)) }
        sendNext()
    }

    func whenFinished(_ done: @escaping () -> Void) {
        if queue.isEmpty && inFlight == nil { done() } else { finished = done }
    }

    func receive(_ event: Event<Value>) throws {
        switch event {
        case .next(let element):
            guard let batch else { return enqueue(element, origin: Origin.current) }
            filling.append(element)
            if let origin = Origin.current { fillingOrigins.append(origin) }
            if filling.count >= batch.count {
                flushBatch()
            } else if filling.count == 1 {
                // The timer works for the whole batch, not for the element current now.
                batchTimer.disposable = Origin.with(nil) {
                    context.scheduler.schedule(after: batch.period) { [weak self] in self?.flushBatch() }
                }
            }
        case .completed, .error:
            flushBatch()
            ended = true
        }
    }

    func close() throws {
        closed?.value = unanswered()
        batchTimer.dispose()
        inFlight?.dispose()
        inFlight = nil
        // They hold the run, which holds this sink.
        fail = nil
        finished = nil
    }

    private func flushBatch() {
        batchTimer.disposable = nil
        guard !filling.isEmpty else { return }
        let elements = filling
        filling.removeAll()
        let origins = fillingOrigins
        fillingOrigins.removeAll()
        enqueue(.array(elements), origin: Origin.joining(origins))
    }

    private func enqueue(_ value: Value, origin: Origin?) {
        queue.append((value, origin))
        sendNext()
    }

    /// Sends the first queued element unless a request is in flight.
    private func sendNext() {
        guard inFlight == nil else { return }
        guard let (value, origin) = queue.first else {
            if ended, let finished {
                self.finished = nil
                finished()
            }
            return
        }
        let request: HTTPRequestData
        do {
            request = try makeRequest(value)
        } catch {
            return answered(value, origin: origin, failure: error)
        }
        var done = false
        // The request's timers (retries) work for this element only through what it keeps here.
        let subscription = Origin.with(nil) {
            setup.fetch(request).subscribe(
                AnyObserver<HTTPResponseData> { [weak self] event in
                    guard let self, !done else { return }
                    switch event {
                    case .next: break
                    case .completed:
                        done = true
                        self.answered(value, origin: origin, failure: nil)
                    case .error(let error):
                        done = true
                        self.answered(value, origin: origin, failure: error)
                    }
                })
        }
        // An answer may come synchronously (a canned one): then nothing is in flight any more.
        if done { subscription.dispose() } else { inFlight = subscription }
    }

    /// The request for `value` was answered; `origin` is let go (failed first if it failed).
    private func answered(_ value: Value, origin: Origin?, failure: (any Error)?) {
        // Ended, the request's subscription is let go of (its retry timers with it).
        inFlight?.dispose()
        inFlight = nil
        if !queue.isEmpty { queue.removeFirst() }
        if let failure {
            // Received but not written: the run's summary counts only what was answered.
            context.meter?.count(ComponentMeter.unwrittenCounter)
            do {
                try Origin.with(origin) { try context.elementFailed(failure, element: value) }
            } catch {
                context.meter?.count(ComponentMeter.unwrittenCounter, by: queue.count)
                queue.removeAll()
                fail?(error)
                return
            }
        } else if let origin {
            context.letGo([origin])
        }
        // The next request goes from the scheduler, not from inside this answer's callback.
        Origin.with(nil) { _ = context.scheduler.schedule { [weak self] in self?.sendNext() } }
    }

    private func makeRequest(_ value: Value) throws -> HTTPRequestData {
        var request = try HTTPSourceRequest.make(
            value, url: url, method: method, query: [], headers: headers, body: body, context: context)
        if body == nil {
            var bytes: [UInt8] = []
            JSONSerializer.write(value, to: &bytes)
            request.body = bytes
            request.headers.append(("Content-Type", "application/json"))
        }
        return request
    }
}
