import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// Sends requests. Every transport calls `completion` on the pipeline's scheduler, once, unless
/// the returned disposable was disposed first (which, for the network, closes the connection).
protocol HTTPTransport: AnyObject {
    func start(
        _ request: HTTPRequestData, timeout: RxTimeInterval,
        completion: @escaping (Result<HTTPResponseData, HTTPTransportError>) -> Void
    ) -> any Disposable
}

/// How a run's HTTP sources reach their servers: the network, the network while recording every
/// exchange to a file, or a recording instead of the network. `rivulet run --record/--replay`
/// hands one to the compiler; without one, sources use the network.
public final class HTTPSession {
    /// Where requests go.
    public enum Mode {
        /// To the network.
        case live
        /// To the network, each exchange saved (secrets removed) to the file at this path.
        case record(String)
        /// Answered from the recording at this path; nothing reaches the network.
        case replay(String)
        /// Answered from these exchanges after their delays, on the pipeline's clock (a test
        /// file's `http:` section); nothing reaches the network.
        case canned([CannedHTTPExchange])
    }

    /// Where requests go.
    public let mode: Mode
    /// Keys and tokens the sources use, kept out of recordings, logs and errors.
    public let redactor = SecretRedactor()
    /// The requests sent and how each ended (kept in `canned` mode, for `expectRequests`).
    public let requests = HTTPRequestLog()
    private var transport: (any HTTPTransport)?

    /// A session in `mode`.
    public init(mode: Mode) {
        self.mode = mode
    }

    /// The transport for the pipeline `context` belongs to.
    func transport(_ context: ComponentContext) throws -> any HTTPTransport {
        if let transport { return transport }
        let made: any HTTPTransport
        switch mode {
        case .live:
            made = try LiveHTTPTransport(scheduler: context.scheduler)
        case .record(let path):
            made = RecordingHTTPTransport(
                inner: try LiveHTTPTransport(scheduler: context.scheduler), path: path, redactor: redactor)
        case .replay(let path):
            let exchanges = try HTTPRecording.load(path: path)
            made = ScriptedHTTPTransport(
                exchanges: exchanges, scheduler: context.scheduler, source: "the recording \(path)", useDelays: false)
        case .canned(let exchanges):
            made = ScriptedHTTPTransport(
                exchanges: exchanges.map(RecordedExchange.init(canned:)), scheduler: context.scheduler,
                source: "the test's http responses", useDelays: true, log: requests)
        }
        transport = made
        return made
    }
}

/// A canned HTTP exchange, answered after `delay` on the pipeline's clock: the request it
/// answers (method, path and the query parameters it must carry) and the response.
public struct CannedHTTPExchange {
    /// The request's method (nil: any).
    public var method: String?
    /// The request's path.
    public var path: String
    /// Query parameters the request must carry.
    public var query: [String: String]
    /// The status to answer.
    public var status: Int
    /// Headers to answer with.
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]
    /// How long the answer takes.
    public var delay: RxTimeInterval

    /// An exchange.
    public init(
        method: String?, path: String, query: [String: String], status: Int, headers: [String: String],
        body: [UInt8], delay: RxTimeInterval
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
    }
}

/// The network, through AsyncHTTPClient (pooled connections, redirects, timeouts, cancellation).
final class LiveHTTPTransport: HTTPTransport {
    /// Bodies larger than this are an error rather than a memory problem.
    static let maximumBodyBytes = 32 << 20
    private let scheduler: any ConcurrentDeliveryScheduler

    init(scheduler: any SchedulerType) throws {
        guard let delivering = scheduler as? any ConcurrentDeliveryScheduler else {
            throw HTTPTransportError(
                "HTTP sources need the real clock: run without --clock virtual, or with --replay FILE",
                isRetryable: false)
        }
        self.scheduler = delivering
    }

    /// The client every live request goes through: AsyncHTTPClient's defaults, except that a
    /// connection that cannot be made fails at once (refused) or within 5 s (no answer), rather
    /// than being tried again until the request's deadline.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.timeout.connect = .seconds(5)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    func start(
        _ request: HTTPRequestData, timeout: RxTimeInterval,
        completion: @escaping (Result<HTTPResponseData, HTTPTransportError>) -> Void
    ) -> any Disposable {
        let state = SchedulerBound(LiveRequestState(completion: completion))
        let task = Self.launch(request, timeout: timeout, scheduler: scheduler, state: state)
        // The timeout bounds the whole exchange, body included (a server that sends its headers
        // and then stalls, or drips a byte at a time): it runs on the pipeline's clock.
        let timer = scheduler.schedule(after: timeout) {
            guard let completion = state.value.completion else { return }
            state.value.completion = nil
            task.cancel()
            completion(.failure(HTTPTransportError("no answer within \(DurationSyntax.format(timeout))")))
        }
        state.value.timer = timer
        return Disposables.create {
            state.value.completion = nil
            timer.dispose()
            task.cancel()  // AsyncHTTPClient closes the connection of a request cancelled mid-way.
        }
    }

    private static func launch(
        _ request: HTTPRequestData, timeout: RxTimeInterval, scheduler: any ConcurrentDeliveryScheduler,
        state: SchedulerBound<LiveRequestState>
    ) -> Task<Void, Never> {
        Task {
            let result = await perform(request, timeout: timeout)
            scheduler.enqueue {
                guard let completion = state.value.completion else { return }
                state.value.completion = nil
                state.value.timer?.dispose()
                completion(result)
            }
        }
    }

    private static func perform(_ request: HTTPRequestData, timeout: RxTimeInterval) async -> Result<
        HTTPResponseData, HTTPTransportError
    > {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if !request.headers.contains(where: { $0.0.lowercased() == "user-agent" }) {
            outgoing.headers.add(name: "User-Agent", value: "rivulet/0.1")
        }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let seconds = Int64(max(1, timeout.totalNanoseconds / 1_000_000))
        do {
            let response = try await client.execute(outgoing, timeout: .milliseconds(seconds))
            let limit = min(request.maximumResponseBytes ?? maximumBodyBytes, maximumBodyBytes)
            if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > limit {
                return .failure(Self.tooLarge(limit, length: length))
            }
            let body: ByteBuffer
            do {
                body = try await response.body.collect(upTo: limit)
            } catch is NIOTooManyBytesError {
                return .failure(Self.tooLarge(limit, length: nil))
            }
            return .success(
                HTTPResponseData(
                    status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                    body: Array(body.readableBytesView), url: response.url?.absoluteString ?? request.url))
        } catch is CancellationError {
            return .failure(HTTPTransportError("cancelled", isRetryable: false))
        } catch let error as HTTPClientError {
            if error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
                return .failure(HTTPTransportError("no answer within \(DurationSyntax.format(timeout))"))
            }
            if error == .cancelled { return .failure(HTTPTransportError("cancelled", isRetryable: false)) }
            if error == .bodyLengthMismatch || error == .remoteConnectionClosed {
                return .failure(HTTPTransportError("the connection was closed before the response was complete"))
            }
            if error == .invalidURL || error == .emptyHost || error == .emptyScheme {
                return .failure(HTTPTransportError("invalid URL", isRetryable: false))
            }
            return .failure(HTTPTransportError("\(error)"))
        } catch {
            return .failure(HTTPTransportError(describe(error)))
        }
    }

    private static func tooLarge(_ limit: Int, length: Int?) -> HTTPTransportError {
        let size = length.map { " (\($0) bytes)" } ?? ""
        return HTTPTransportError(
            "the response\(size) is larger than the limit of \(limit) bytes; stopped reading", isRetryable: false)
    }

    private static func describe(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        if text.contains("connectionReset") || text.contains("reset by peer") { return "connection reset" }
        return text
    }
}

/// What a live request needs on the pipeline's thread.
private final class LiveRequestState {
    var completion: ((Result<HTTPResponseData, HTTPTransportError>) -> Void)?
    var timer: (any Disposable)?

    init(completion: @escaping (Result<HTTPResponseData, HTTPTransportError>) -> Void) {
        self.completion = completion
    }
}

/// One exchange of a recording or a test: which request it answers and the answer.
struct RecordedExchange {
    var method: String?
    var path: String
    var query: [(String, String)]
    var exactQuery: Bool
    var response: HTTPResponseData
    var delay: RxTimeInterval

    init(canned: CannedHTTPExchange) {
        method = canned.method
        path = canned.path
        query = canned.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        exactQuery = false
        response = HTTPResponseData(
            status: canned.status, headers: canned.headers.map { ($0.key, $0.value) }, body: canned.body, url: "")
        delay = canned.delay
    }

    init(
        method: String?, path: String, query: [(String, String)], exactQuery: Bool, response: HTTPResponseData,
        delay: RxTimeInterval = .zero
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.exactQuery = exactQuery
        self.response = response
        self.delay = delay
    }

    /// Whether this exchange answers `request`. Secret parameters are not compared (a recording
    /// holds placeholders for them).
    func matches(_ request: HTTPRequestData) -> Bool { matches(RequestKey(request)) }

    func matches(_ key: RequestKey) -> Bool {
        if let method, method.uppercased() != key.method { return false }
        guard key.path == path else { return false }
        let wanted = query.filter { !SecretRedactor.secretQueryNames.contains($0.0.lowercased()) }
        if exactQuery {
            return key.query.map { "\($0.0)=\($0.1)" } == wanted.sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }
        }
        return wanted.allSatisfy { pair in key.query.contains { $0.0 == pair.0 && $0.1 == pair.1 } }
    }
}

/// What an exchange is matched on: a request's method, path and query without its secret
/// parameters (sorted), parsed once per request.
struct RequestKey {
    let method: String
    let path: String
    let query: [(String, String)]

    init(_ request: HTTPRequestData) {
        method = request.method.uppercased()
        path = request.path
        query = request.queryItems.filter { !SecretRedactor.secretQueryNames.contains($0.0.lowercased()) }
            .sorted { $0.0 < $1.0 }
    }
}

/// Answers from a list of exchanges, with no network: a test's `http` section (on the virtual
/// clock, with each answer's delay) or a recording. Several exchanges for one request answer in
/// order; the last one keeps answering after that.
final class ScriptedHTTPTransport: HTTPTransport {
    private let exchanges: [RecordedExchange]
    private var used: [Int] = []
    private let scheduler: any SchedulerType
    private let source: String
    private let useDelays: Bool
    private let log: HTTPRequestLog?

    init(
        exchanges: [RecordedExchange], scheduler: any SchedulerType, source: String, useDelays: Bool,
        log: HTTPRequestLog? = nil
    ) {
        self.exchanges = exchanges
        self.scheduler = scheduler
        self.source = source
        self.useDelays = useDelays
        self.log = log
        used = Array(repeating: 0, count: exchanges.count)
    }

    func start(
        _ request: HTTPRequestData, timeout: RxTimeInterval,
        completion: @escaping (Result<HTTPResponseData, HTTPTransportError>) -> Void
    ) -> any Disposable {
        guard let log else { return answer(request, completion: completion) }
        let scheduler = self.scheduler
        let index = log.sent(request, at: scheduler.now)
        let pending = answer(request) { result in
            let status = try? result.get().status
            log.ended(index, .answered(scheduler.now, status: status))
            completion(result)
        }
        return Disposables.create {
            log.ended(index, .cancelled(scheduler.now))
            pending.dispose()
        }
    }

    private func answer(
        _ request: HTTPRequestData, completion: @escaping (Result<HTTPResponseData, HTTPTransportError>) -> Void
    ) -> any Disposable {
        let key = RequestKey(request)
        let candidates = exchanges.indices.filter { exchanges[$0].matches(key) }
        let chosen = candidates.first { used[$0] == 0 } ?? candidates.last
        guard let chosen else {
            let missing = HTTPRequestLog.describe(
                method: request.method, path: request.path, query: request.redactedQueryItems)
            return scheduler.schedule {
                completion(
                    .failure(HTTPTransportError("\(self.source) has no answer for \(missing)", isRetryable: false)))
            }
        }
        used[chosen] += 1
        var response = exchanges[chosen].response
        if response.url.isEmpty { response.url = request.url }
        let delay = useDelays ? exchanges[chosen].delay : .zero
        if let limit = request.maximumResponseBytes, response.body.count > limit {
            let size = response.body.count
            return scheduler.schedule(after: delay) {
                completion(
                    .failure(
                        HTTPTransportError(
                            "the response (\(size) bytes) is larger than the limit of \(limit) bytes; stopped reading",
                            isRetryable: false)))
            }
        }
        return scheduler.schedule(after: delay) { completion(.success(response)) }
    }
}

/// The network, with every exchange appended to a recording file as it completes.
final class RecordingHTTPTransport: HTTPTransport {
    private let inner: any HTTPTransport
    private let recording: HTTPRecording

    init(inner: any HTTPTransport, path: String, redactor: SecretRedactor) {
        self.inner = inner
        recording = HTTPRecording(path: path, redactor: redactor)
    }

    func start(
        _ request: HTTPRequestData, timeout: RxTimeInterval,
        completion: @escaping (Result<HTTPResponseData, HTTPTransportError>) -> Void
    ) -> any Disposable {
        let recording = self.recording
        return inner.start(request, timeout: timeout) { result in
            if case .success(let response) = result { recording.append(request: request, response: response) }
            completion(result)
        }
    }
}
