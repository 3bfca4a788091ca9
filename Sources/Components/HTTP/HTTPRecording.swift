import Foundation
@_spi(Components) import Pipeline

/// A file of recorded HTTP exchanges (`rivulet run --record`), replayed by `--replay`.
///
/// JSON: `{"recording": 1, "exchanges": [{"request": {method, path, query, headers}, "response":
/// {status, headers, body | bodyText}}]}`. Bodies that are JSON are stored as JSON, so a recording
/// can be read and edited; keys, tokens and `Authorization` headers are replaced by `REDACTED`
/// before anything is written.
final class HTTPRecording: @unchecked Sendable {
    /// Response headers that describe the connection or the encoding, not the answer.
    static let droppedResponseHeaders: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive",
    ]

    private let path: String
    private let redactor: SecretRedactor
    private var exchanges: [Value] = []

    init(path: String, redactor: SecretRedactor) {
        self.path = path
        self.redactor = redactor
    }

    /// Adds an exchange and rewrites the file (whole, through a temporary file and a rename, so
    /// a run that is killed leaves the last complete recording).
    func append(request: HTTPRequestData, response: HTTPResponseData) {
        var query = JSONObject()
        for (name, value) in request.queryItems {
            query[name] = .string(
                SecretRedactor.secretQueryNames.contains(name.lowercased())
                    ? SecretRedactor.placeholder : redactor.redact(value))
        }
        var requestHeaders = JSONObject()
        for (name, value) in request.headers {
            requestHeaders[name.lowercased()] = .string(
                SecretRedactor.isSecretHeader(name) ? SecretRedactor.placeholder : redactor.redact(value))
        }
        var responseHeaders = JSONObject()
        for (name, value) in response.headers
        where !Self.droppedResponseHeaders.contains(name.lowercased()) && !SecretRedactor.isSecretHeader(name) {
            responseHeaders[name.lowercased()] = .string(redactor.redact(value))
        }
        var recordedRequest = JSONObject()
        recordedRequest["method"] = .string(request.method)
        recordedRequest["path"] = .string(request.path)
        recordedRequest["query"] = .object(query)
        recordedRequest["headers"] = .object(requestHeaders)
        var recordedResponse = JSONObject()
        recordedResponse["status"] = .int(response.status)
        recordedResponse["headers"] = .object(responseHeaders)
        let text = redactor.redact(String(decoding: response.body, as: UTF8.self))
        if let json = try? JSONParser.parse(Array(text.utf8)) {
            recordedResponse["body"] = json
        } else {
            recordedResponse["bodyText"] = .string(text)
        }
        var exchange = JSONObject()
        exchange["request"] = .object(recordedRequest)
        exchange["response"] = .object(recordedResponse)
        exchanges.append(.object(exchange))
        var document = JSONObject()
        document["recording"] = .int(1)
        document["exchanges"] = .array(exchanges)
        var bytes = Array(JSONSerializer.prettyString(.object(document)).utf8)
        bytes.append(0x0A)
        let temporary = path + ".partial"
        if FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) {
            _ = rename(temporary, path)
        }
    }

    /// The exchanges of the recording at `path`.
    static func load(path: String) throws -> [RecordedExchange] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HTTPTransportError("cannot read the recording \(path)", isRetryable: false)
        }
        let document: Value
        do { document = try JSONParser.parse(Array(data)) } catch {
            throw HTTPTransportError("the recording \(path) is not JSON: \(error)", isRetryable: false)
        }
        guard case .object(let root) = document, case .array(let entries)? = root["exchanges"] else {
            throw HTTPTransportError("the recording \(path) has no \"exchanges\" list", isRetryable: false)
        }
        return try entries.enumerated().map { index, entry in
            guard case .object(let exchange) = entry, case .object(let request)? = exchange["request"],
                case .object(let response)? = exchange["response"], let path = request["path"]?.stringValue,
                case .int(let status)? = response["status"]
            else {
                throw HTTPTransportError(
                    "the recording \(path): exchange \(index + 1) needs request.path and response.status",
                    isRetryable: false)
            }
            var query: [(String, String)] = []
            if case .object(let items)? = request["query"] {
                for (name, value) in items { query.append((name, value.stringValue ?? value.description)) }
            }
            var headers: [(String, String)] = []
            if case .object(let items)? = response["headers"] {
                for (name, value) in items { headers.append((name, value.stringValue ?? value.description)) }
            }
            var body: [UInt8] = []
            if let text = response["bodyText"]?.stringValue {
                body = Array(text.utf8)
            } else if let json = response["body"] {
                JSONSerializer.write(json, to: &body)
            }
            return RecordedExchange(
                method: request["method"]?.stringValue, path: path, query: query, exactQuery: true,
                response: HTTPResponseData(status: status, headers: headers, body: body, url: ""))
        }
    }
}
