import Reactive

/// What a pipeline asked of the network, for a test file's `expectRequests`: each request with
/// when it was sent and how it ended (answered, or cancelled before its answer, as when
/// flatMapLatest drops an inner). Kept by the canned transport of `rivulet test`.
public final class HTTPRequestLog {
    /// How a request ended.
    public enum Outcome: Equatable {
        /// Still waiting when the run ended.
        case pending
        /// Answered at this time: with a status, or nil when the test had no answer for it.
        case answered(RxTime, status: Int?)
        /// Cancelled at this time, before its answer.
        case cancelled(RxTime)
    }

    /// One request.
    public struct Entry {
        /// GET, POST, …
        public var method: String
        /// The URL's path.
        public var path: String
        /// The query parameters, in order, secret ones replaced by a placeholder.
        public var query: [(String, String)]
        /// Its body, if it had one (a sink's request).
        public var body: [UInt8]?
        /// When it was sent.
        public var sent: RxTime
        /// How it ended.
        public var outcome: Outcome

        /// `GET /path?q=a`.
        public var line: String { HTTPRequestLog.describe(method: method, path: path, query: query) }
    }

    /// A request as one line: `GET /path?q=a&page=2`.
    public static func describe(method: String, path: String, query: [(String, String)]) -> String {
        "\(method) \(path)" + (query.isEmpty ? "" : "?" + query.map { "\($0.0)=\($0.1)" }.joined(separator: "&"))
    }

    /// The requests, in the order they were sent.
    public private(set) var entries: [Entry] = []

    /// An empty log.
    public init() {}

    func sent(_ request: HTTPRequestData, at time: RxTime) -> Int {
        let query = request.queryItems.map { name, value in
            (name, SecretRedactor.secretQueryNames.contains(name.lowercased()) ? SecretRedactor.placeholder : value)
        }
        entries.append(
            Entry(
                method: request.method.uppercased(), path: request.path, query: query, body: request.body, sent: time,
                outcome: .pending))
        return entries.count - 1
    }

    func ended(_ index: Int, _ outcome: Outcome) {
        guard entries[index].outcome == .pending else { return }
        entries[index].outcome = outcome
    }
}
