import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 server on 127.0.0.1 (a free port) that answers from a script: real sockets, real
/// status codes and headers, slow answers and dropped connections. It logs what happened on
/// each connection, so a test can see that a client closed a connection before its answer.
/// It stops when `shutdown()` is called or the test process ends.
public final class TestHTTPServer: @unchecked Sendable {
    /// A request as the server received it.
    public struct Request: Sendable {
        /// GET, POST, …
        public let method: String
        /// The path, without the query.
        public let path: String
        /// The path and query as sent.
        public let uri: String
        /// The query parameters, decoded.
        public let query: [String: String]
        /// The headers.
        public let headers: [(String, String)]
        /// The body.
        public let body: [UInt8]

        /// The first header named `name`, compared without case.
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    /// What the server does with a request.
    public enum Reply: Sendable {
        /// Answers after `delay` seconds.
        case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], delay: Double = 0)
        /// Closes the connection without answering.
        case drop
        /// Sends the status and headers (with the Content-Length of `body`) and the first
        /// `before` bytes of the body, then stalls; with `dripEvery`, sends the rest one byte
        /// per that many seconds instead.
        case stall(status: Int, headers: [(String, String)], body: [UInt8], before: Int, dripEvery: Double? = nil)

        /// A JSON answer.
        public static func json(
            _ text: String, status: Int = 200, headers: [(String, String)] = [], delay: Double = 0
        ) -> Reply {
            .respond(
                status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers,
                body: Array(text.utf8), delay: delay)
        }
    }

    /// Something that happened, with the seconds since the server started.
    public enum Event: Sendable, Equatable {
        /// A request arrived.
        case received(uri: String, at: Double)
        /// An answer was sent.
        case answered(uri: String, status: Int, at: Double)
        /// The client closed the connection while its request waited for an answer.
        case closedBeforeAnswer(uri: String, at: Double)
        /// The server dropped the connection on purpose.
        case dropped(uri: String, at: Double)
    }

    /// Decides the reply to a request; `count` is how many requests with this path came before.
    public typealias Script = @Sendable (_ request: Request, _ count: Int) -> Reply

    private let channel: any Channel
    private let lock = NSLock()
    private var events: [Event] = []
    private var requests: [Request] = []
    private var counts: [String: Int] = [:]
    private let started = DispatchTime.now().uptimeNanoseconds
    private let script: Script

    /// The port it listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts a server that answers with `script`.
    public init(script: @escaping Script) throws {
        self.script = script
        let box = ServerBox()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(ConnectionHandler(server: box))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
        box.server = self
    }

    deinit { try? channel.close().wait() }

    /// Stops listening.
    public func shutdown() { try? channel.close().wait() }

    /// What happened so far.
    public var log: [Event] { lock.withLock { events } }
    /// When each request arrived, in seconds since the server started.
    public var arrivals: [Double] {
        log.compactMap { event in
            if case .received(_, let at) = event { return at }
            return nil
        }
    }
    /// The requests so far, in order of arrival.
    public var received: [Request] { lock.withLock { requests } }

    fileprivate var elapsed: Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }

    fileprivate func record(_ event: Event) { lock.withLock { events.append(event) } }

    fileprivate func reply(to request: Request) -> Reply {
        let count = lock.withLock {
            requests.append(request)
            events.append(.received(uri: request.uri, at: elapsed))
            let count = counts[request.path, default: 0]
            counts[request.path] = count + 1
            return count
        }
        return script(request, count)
    }

    /// An HTTP date (for Date and Retry-After headers).
    public static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

/// Lets handlers reach the server, which is made after the bootstrap.
private final class ServerBox: @unchecked Sendable {
    weak var server: TestHTTPServer?
}

private final class ConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ServerBox
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var waiting: (uri: String, task: Scheduled<Void>)?

    init(server: ServerBox) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head, let server = server.server else { return }
            let components = URLComponents(string: head.uri)
            var query: [String: String] = [:]
            for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
            let request = TestHTTPServer.Request(
                method: head.method.rawValue, path: components?.path ?? head.uri, uri: head.uri, query: query,
                headers: head.headers.map { ($0.name, $0.value) }, body: body)
            switch server.reply(to: request) {
            case .drop:
                server.record(.dropped(uri: head.uri, at: server.elapsed))
                context.close(promise: nil)
            case .stall(let status, let headers, let body, let before, let dripEvery):
                var responseHeaders = HTTPHeaders(headers)
                responseHeaders.replaceOrAdd(name: "Content-Length", value: String(body.count))
                let responseHead = HTTPResponseHead(
                    version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: responseHeaders)
                context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
                context.writeAndFlush(
                    wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body.prefix(before))))), promise: nil)
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                if let dripEvery {
                    drip(Array(body.dropFirst(before)), every: dripEvery, context: loopBound)
                }
                waiting = (head.uri, context.eventLoop.scheduleTask(in: .hours(1)) {})
            case .respond(let status, let headers, let body, let delay):
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                let task = context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay * 1000))) {
                    self.answer(context: loopBound.value, uri: head.uri, status: status, headers: headers, body: body)
                }
                waiting = (head.uri, task)
            }
        }
    }

    private func drip(_ rest: [UInt8], every seconds: Double, context: NIOLoopBound<ChannelHandlerContext>) {
        guard let byte = rest.first else { return }
        _ = context.value.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            guard context.value.channel.isActive else { return }
            context.value.writeAndFlush(
                self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: [byte])))), promise: nil)
            if rest.count == 1 {
                context.value.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                self.drip(Array(rest.dropFirst()), every: seconds, context: context)
            }
        }
    }

    private func answer(
        context: ChannelHandlerContext, uri: String, status: Int, headers: [(String, String)], body: [UInt8]
    ) {
        waiting = nil
        var responseHeaders = HTTPHeaders(headers)
        if !responseHeaders.contains(name: "date") {
            responseHeaders.add(name: "Date", value: TestHTTPServer.httpDate(Date()))
        }
        responseHeaders.replaceOrAdd(name: "Content-Length", value: String(body.count))
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: responseHeaders)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        server.server?.record(.answered(uri: uri, status: status, at: server.server?.elapsed ?? 0))
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let waiting, let server = server.server {
            waiting.task.cancel()
            server.record(.closedBeforeAnswer(uri: waiting.uri, at: server.elapsed))
        }
        waiting = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
