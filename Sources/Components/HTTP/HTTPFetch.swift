import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// When and how often a failed request is tried again.
struct RetryPolicy {
    /// Retries after the first attempt (0: none).
    var maxRetries = 4
    /// The first backoff; each retry doubles it, up to `maxBackoff`, with jitter.
    var backoff: RxTimeInterval = .seconds(1)
    /// The longest backoff.
    var maxBackoff: RxTimeInterval = .seconds(30)
    /// The longest a rate limit (Retry-After, X-RateLimit-Reset) is waited out; longer is an error.
    var maxWait: RxTimeInterval = .seconds(300)

    /// `max` counts attempts in all, the first included, as the `retry` operator's does.
    private static let maxAttemptsKey = Parameter<Int>(
        "max", default: 5,
        doc: "Attempts in all, the first included (as the retry operator counts); 1 turns retrying off."
    ).atLeast(1)
    private static let backoffKey = Parameter<RxTimeInterval>(
        "backoff", default: .seconds(1), doc: "The first wait; doubled on each retry, jittered.")
    private static let maxBackoffKey = Parameter<RxTimeInterval>(
        "maxBackoff", default: .seconds(30), doc: "The longest wait between retries.")
    private static let maxWaitKey = Parameter<RxTimeInterval>(
        "maxWait", default: .seconds(300),
        doc: "The longest a rate limit (Retry-After, X-RateLimit-Reset) is waited out; longer fails at once.")

    /// The `retry` parameter every HTTP source takes.
    static let parameter = Parameter<ParameterValues?>.object(
        "retry", [maxAttemptsKey, backoffKey, maxBackoffKey, maxWaitKey],
        doc:
            "Retries on connection errors, 5xx, 429 and rate-limit 403s (never on other 4xx), with jittered exponential backoff; Retry-After and X-RateLimit-Reset are waited out.",
        example: "{ max: 3, backoff: 500ms }")

    init() {}

    /// The policy a source's `retry` parameter describes (the defaults when it is not given).
    init(_ parameters: ParameterValues?) {
        guard let parameters else { return }
        maxRetries = Swift.max(1, parameters[Self.maxAttemptsKey]) - 1
        backoff = parameters[Self.backoffKey]
        maxBackoff = parameters[Self.maxBackoffKey]
        maxWait = parameters[Self.maxWaitKey]
    }

    /// The jittered exponential backoff before retry number `retry` (0-based): between half and
    /// all of `backoff · 2^retry`, capped at `maxBackoff`.
    func backoff(retry: Int, random: inout SeededRandom) -> RxTimeInterval {
        let base = Double(backoff.totalNanoseconds) * pow(2, Double(min(retry, 30)))
        let capped = min(base, Double(maxBackoff.totalNanoseconds))
        return .nanoseconds(Int64(capped * Double.random(in: 0.5...1, using: &random)))
    }
}

/// What every HTTP source shares to make its requests.
struct HTTPClientSetup {
    let transport: any HTTPTransport
    /// Whether an answer of any status is a response (a client that does not validate the
    /// status, as RxAlamofire's `requestJSON`): nothing is then retried for its status.
    var acceptsEveryStatus = false
    let policy: RetryPolicy
    let timeout: RxTimeInterval
    let redactor: SecretRedactor
    let context: ComponentContext

    /// The setup of a source whose requests may take `timeout` each, retried as its `retry`
    /// parameter says.
    init(timeout: RxTimeInterval, retry: ParameterValues?, context: ComponentContext) throws {
        let session = context.shared(HTTPSession.self) { HTTPSession(mode: .live) }
        do {
            transport = try session.transport(context)
        } catch let error as HTTPTransportError {
            throw context.error(error.message)
        }
        policy = RetryPolicy(retry)
        self.timeout = timeout
        redactor = session.redactor
        self.context = context
    }

    /// `request`, sent: emits the response and completes, after retries; fails with a message
    /// that names the status, the API's own message and the URL (secrets removed).
    func fetch(_ request: HTTPRequestData) -> Observable<HTTPResponseData> {
        let setup = self
        let meter = context.meter
        return Observable.create { observer in
            let current = SerialDisposable()
            func attempt(_ number: Int) {
                let started = setup.context.scheduler.now
                current.disposable = setup.transport.start(request, timeout: setup.timeout) { result in
                    if let meter { Self.measure(result, since: started, on: setup.context.scheduler, into: meter) }
                    switch result {
                    case .success(let response)
                    where setup.acceptsEveryStatus || (200..<300).contains(response.status):
                        observer.on(.next(response))
                        observer.on(.completed)
                    case .success(let response):
                        let wait = setup.retryDelay(for: response, retry: number)
                        switch wait {
                        case .retry(let delay) where number < setup.policy.maxRetries:
                            setup.logRetry(
                                "\(response.status) \(HTTPBody.reason(response.status))", request, delay, number)
                            current.disposable = setup.context.scheduler.schedule(after: delay) { attempt(number + 1) }
                        case .tooLong(let delay):
                            observer.on(
                                .error(
                                    setup.failure(
                                        request, response: response, attempts: number + 1,
                                        note:
                                            "rate limited for \(DurationSyntax.approximate(delay)), longer than retry.maxWait"
                                    )))
                        default:
                            observer.on(.error(setup.failure(request, response: response, attempts: number + 1)))
                        }
                    case .failure(let error):
                        if error.isRetryable && number < setup.policy.maxRetries {
                            let delay = setup.policy.backoff(retry: number, random: &setup.context.environment.random)
                            setup.logRetry(error.message, request, delay, number)
                            current.disposable = setup.context.scheduler.schedule(after: delay) { attempt(number + 1) }
                        } else {
                            let attempts = number > 0 ? " (after \(number + 1) attempts)" : ""
                            observer.on(
                                .error(
                                    setup.context.error(
                                        "\(request.method) \(setup.redactor.redact(url: request.url)): \(setup.redactor.redact(error.message))\(attempts)"
                                    )))
                        }
                    }
                }
            }
            attempt(0)
            return current
        }
    }

    private enum Wait {
        case retry(RxTimeInterval)
        case tooLong(RxTimeInterval)
        case never
    }

    /// Whether a response is worth retrying, and after how long: Retry-After, then a rate limit's
    /// reset time, then backoff. A reset time is measured against the response's own Date header,
    /// so rivulet needs no wall clock of its own.
    private func retryDelay(for response: HTTPResponseData, retry: Int) -> Wait {
        let status = response.status
        let remainingZero = response.header("x-ratelimit-remaining") == "0"
        let retryAfter = response.header("retry-after")
        let rateLimited403 =
            status == 403
            && (remainingZero || retryAfter != nil
                || (HTTPBody.apiMessage(response.body)?.lowercased().contains("rate limit") ?? false))
        guard status >= 500 || status == 429 || rateLimited403 else { return .never }
        var wait: RxTimeInterval?
        if let retryAfter {
            if let seconds = Double(retryAfter.trimmingCharacters(in: .whitespaces)) {
                wait = .milliseconds(Int64(max(0, seconds) * 1000))
            } else if let date = Self.httpDate(retryAfter), let now = response.header("date").flatMap(Self.httpDate) {
                wait = .milliseconds(Int64(max(0, date.timeIntervalSince(now)) * 1000))
            }
        }
        if wait == nil, remainingZero, let reset = response.header("x-ratelimit-reset").flatMap(Double.init),
            let now = response.header("date").flatMap(Self.httpDate)
        {
            // One more second: the reset is given in whole seconds.
            wait = .milliseconds(Int64(max(0, reset - now.timeIntervalSince1970 + 1) * 1000))
        }
        if let wait {
            return wait > policy.maxWait ? .tooLong(wait) : .retry(wait)
        }
        return .retry(policy.backoff(retry: retry, random: &context.environment.random))
    }

    /// A watched run's HTTP counts: requests by status class, their durations, retries.
    private static func measure(
        _ result: Result<HTTPResponseData, HTTPTransportError>, since started: RxTime, on scheduler: any SchedulerType,
        into meter: ComponentMeter
    ) {
        let status: String
        switch result {
        case .success(let response): status = "\(response.status / 100)xx"
        case .failure: status = "error"
        }
        meter.count("http_requests_total", label: ("status", status))
        let elapsed = (scheduler.now - started).components
        meter.observe(
            "http_request_duration_seconds", seconds: Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }

    private func logRetry(_ what: String, _ request: HTTPRequestData, _ delay: RxTimeInterval, _ number: Int) {
        context.meter?.count("http_retries_total")
        context.log(
            "\(context.componentName): \(what) from \(request.method) \(redactor.redact(url: request.url)); "
                + "attempt \(number + 2) of \(policy.maxRetries + 1) in \(DurationSyntax.approximate(delay))",
            level: .warning)
    }

    /// The error for a response that failed for good.
    func failure(
        _ request: HTTPRequestData, response: HTTPResponseData, attempts: Int, note: String? = nil
    ) -> PipelineRuntimeError {
        var message = "\(request.method) \(redactor.redact(url: request.url)): \(response.status)"
        let reason = HTTPBody.reason(response.status)
        if !reason.isEmpty { message += " \(reason)" }
        if let api = HTTPBody.apiMessage(response.body) { message += ": \(redactor.redact(api))" }
        if let note { message += " (\(note))" } else if attempts > 1 { message += " (after \(attempts) attempts)" }
        return context.error(message)
    }

    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
