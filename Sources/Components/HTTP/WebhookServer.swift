import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(Components) import Pipeline
import Synchronization

/// How an `httpServer` source is set up: where it listens and what it accepts.
struct WebhookSettings: Sendable {
    let host: String
    let port: Int
    let paths: Set<String>
    let token: String?
    let maxBodyBytes: Int
    let queueLimit: Int
    let limits: HTTPConnectionLimits
}

/// What a request's body holds: its elements, or why it was refused.
enum WebhookBody {
    /// One JSON value (an array is one element per item) or JSON Lines.
    static func elements(_ body: [UInt8]) -> Result<[Value], WebhookRefusal> {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return .failure(
                WebhookRefusal(status: 400, message: "the body is empty; send a JSON value, a JSON array or JSON Lines")
            )
        }
        if let value = try? JSONParser.parse(body) {
            if case .array(let items) = value { return .success(items) }
            return .success([value])
        }
        var elements: [Value] = []
        var lineNumber = 0
        for line in body.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            let trimmed = line.last == 0x0D ? line.dropLast() : line
            if trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            do {
                elements.append(try JSONParser.parse(Array(trimmed)))
            } catch {
                let what = lineNumber == 1 ? "the body is not JSON" : "line \(lineNumber) is not JSON"
                return .failure(WebhookRefusal(status: 400, message: "\(what): \(error)"))
            }
        }
        return .success(elements)
    }
}

/// A request the server answers with an error status and `{"error": message}`.
struct WebhookRefusal: Error {
    let status: Int
    let message: String
    var headers: [(String, String)] = []
}

/// Elements accepted by the server and not yet handed to the pipeline: bounded, so a flood is
/// answered 503 instead of growing memory.
final class WebhookQueue: Sendable {
    private let waiting = Mutex(0)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Reserves room for `count` elements; false when they do not all fit (none are taken then).
    func reserve(_ count: Int) -> Bool {
        waiting.withLock { waiting in
            // One request larger than the whole queue is still taken when the queue is empty, so a
            // big but valid batch is never refused for ever.
            guard waiting == 0 || waiting + count <= limit else { return false }
            waiting += count
            return true
        }
    }

    /// Frees the room of `count` elements handed to the pipeline.
    func release(_ count: Int) {
        waiting.withLock { $0 -= count }
    }
}

/// The HTTP server of an `httpServer` source, on SwiftNIO: it parses and checks each request on
/// its own thread, hands the elements to `deliver` (which runs them into the pipeline on the
/// pipeline's thread and calls back once they are in), and answers 202 then.
final class WebhookServer: Sendable {
    typealias Deliver = @Sendable (_ elements: [Value], _ answer: @escaping @Sendable (WebhookAnswer) -> Void) -> Void

    private let channel: any Channel
    /// The port it listens on (the one written, or the one the system chose for port 0).
    let port: Int

    init(settings: WebhookSettings, queue: WebhookQueue, deliver: @escaping Deliver) throws {
        // The handlers reach the server (to count what they owe) once it exists.
        let server = ServerReference()
        let connections = HTTPConnections(limits: settings.limits)
        let bootstrap = HTTPConnections.accepting(ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // A client may shut its side down after the request (nc -q, some HTTP/1.0 clients and
            // proxies): the connection stays open for the answer, which the HTTP pipeline handler
            // sends before it closes.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandlers(
                        HTTPConnectionGuard(connections),
                        WebhookHandler(settings: settings, queue: queue, server: server, deliver: deliver))
                }
            }
        channel = try bootstrap.bind(host: settings.host, port: settings.port).wait()
        port = channel.localAddress?.port ?? settings.port
        server.value.withLock { $0 = self }
    }

    /// The server, as its connections' handlers find it.
    final class ServerReference: Sendable {
        let value = Mutex<WebhookServer?>(nil)
    }

    /// Stops listening; requests in progress are answered or dropped with their connections.
    func stop() {
        channel.close(promise: nil)
    }

    /// From now on, new requests are answered 503 with Retry-After (the run is stopping); those
    /// already taken are still answered.
    func refuseNew() { state.withLock { $0.refusing = true } }

    /// Whether new requests are refused.
    var isRefusing: Bool { state.withLock { $0.refusing } }

    /// Waits (up to `timeout`) until every request taken has been answered, so the process does
    /// not end before its answers are sent.
    func waitForAnswers(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while state.withLock({ $0.unanswered }) > 0, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// A request taken, to be answered.
    fileprivate func took() { state.withLock { $0.unanswered += 1 } }

    /// A taken request's answer was written.
    fileprivate func answered() { state.withLock { $0.unanswered -= 1 } }

    private let state = Mutex(ServerState())

    private struct ServerState {
        var refusing = false
        var unanswered = 0
    }
}

/// How a request whose elements were taken is answered.
enum WebhookAnswer: Sendable {
    /// 202 {"accepted": N}: its elements are in the pipeline (or, by default, safe).
    case accepted(Int)
    /// 500 {"error": ...}: work on one of its elements failed; the sender should send it again.
    case failed(String)
    /// 503 with Retry-After: the run stopped before its elements were safe; send it again.
    case retryLater(String)
}

/// One connection: reads a request (refusing a body over the limit as soon as it is), checks the
/// path, method and token, and answers.
final class WebhookHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let settings: WebhookSettings
    private let queue: WebhookQueue
    private let server: WebhookServer.ServerReference
    private let deliver: WebhookServer.Deliver
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var refused: WebhookRefusal?
    /// Whether the client shut its side down (it reads the answer, then the connection ends).
    private var inputClosed = false
    /// Whether a request was read whole and waits for its answer.
    private var awaitingAnswer = false

    init(
        settings: WebhookSettings, queue: WebhookQueue, server: WebhookServer.ServerReference,
        deliver: @escaping WebhookServer.Deliver
    ) {
        self.settings = settings
        self.queue = queue
        self.server = server
        self.deliver = deliver
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            refused = check(head)
        case .body(var buffer):
            guard refused == nil else { return }
            if body.count + buffer.readableBytes > settings.maxBodyBytes {
                refused = tooLarge()
                body = []
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            awaitingAnswer = true
            let keepAlive = head.isKeepAlive
            if let refused {
                return answer(
                    context, status: refused.status, error: refused.message, headers: refused.headers,
                    keepAlive: keepAlive)
            }
            switch WebhookBody.elements(body) {
            case .failure(let refusal):
                answer(context, status: refusal.status, error: refusal.message, keepAlive: keepAlive)
            case .success(let elements):
                handOver(elements, context, keepAlive: keepAlive)
            }
            body = []
        }
    }

    /// A well-formed request's elements: handed to the pipeline if the run takes them, answered
    /// once the pipeline has (202), or at once with why not (503).
    private func handOver(_ elements: [Value], _ context: ChannelHandlerContext, keepAlive: Bool) {
        guard let server = server.value.withLock({ $0 }), !server.isRefusing else {
            return answer(
                context, status: 503, error: "the run is stopping; try again", headers: [("Retry-After", "1")],
                keepAlive: false)
        }
        guard queue.reserve(elements.count) else {
            return answer(
                context, status: 503,
                error: "the pipeline is behind: \(queue.limit) elements are waiting; try again",
                headers: [("Retry-After", "1")], keepAlive: keepAlive)
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        server.took()
        deliver(elements) { outcome in
            eventLoop.execute {
                let (handler, context) = loopBound.value
                switch outcome {
                case .accepted(let count):
                    handler.respond(context, status: 202, body: "{\"accepted\":\(count)}", keepAlive: keepAlive)
                case .failed(let message):
                    handler.answer(context, status: 500, error: message, keepAlive: keepAlive)
                case .retryLater(let message):
                    handler.answer(
                        context, status: 503, error: message, headers: [("Retry-After", "1")],
                        keepAlive: keepAlive)
                }
                server.answered()
            }
        }
    }

    private func tooLarge() -> WebhookRefusal {
        WebhookRefusal(status: 413, message: "the body is larger than maxBodyBytes (\(settings.maxBodyBytes) bytes)")
    }

    /// The refusal a request gets from its head alone, if any.
    private func check(_ head: HTTPRequestHead) -> WebhookRefusal? {
        let path = String(head.uri.prefix { $0 != "?" })
        guard settings.paths.contains(path) else {
            return WebhookRefusal(status: 404, message: "no such path: \(path)")
        }
        guard head.method == .POST else {
            return WebhookRefusal(status: 405, message: "send POST", headers: [("Allow", "POST")])
        }
        if let token = settings.token {
            let given = head.headers.first(name: "authorization") ?? ""
            guard given == "Bearer \(token)" else {
                // A wrong token is not a missing one: say which, without the token.
                guard given.isEmpty else {
                    return WebhookRefusal(
                        status: 401, message: "the bearer token is not the one this server takes",
                        headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
                }
                return WebhookRefusal(
                    status: 401, message: "a bearer token is required (Authorization: Bearer TOKEN)",
                    headers: [("WWW-Authenticate", "Bearer")])
            }
        }
        if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > settings.maxBodyBytes {
            return tooLarge()
        }
        return nil
    }

    private func answer(
        _ context: ChannelHandlerContext, status: Int, error: String, headers: [(String, String)] = [],
        keepAlive: Bool
    ) {
        var object = JSONObject()
        object["error"] = .string(error)
        var bytes: [UInt8] = []
        JSONSerializer.write(.object(object), to: &bytes)
        respond(
            context, status: status, body: String(decoding: bytes, as: UTF8.self), headers: headers,
            keepAlive: keepAlive)
    }

    private func respond(
        _ context: ChannelHandlerContext, status: Int, body: String, headers: [(String, String)] = [],
        keepAlive: Bool
    ) {
        var responseHeaders = HTTPHeaders(headers)
        responseHeaders.add(name: "Content-Type", value: "application/json")
        responseHeaders.add(name: "Content-Length", value: String(body.utf8.count))
        if !keepAlive { responseHeaders.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: responseHeaders)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        awaitingAnswer = false
        if !keepAlive || inputClosed {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            done.whenComplete { _ in bound.value.close(promise: nil) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client shut its side down: it gets the answer it waits for, then the connection ends.
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            if !awaitingAnswer { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
