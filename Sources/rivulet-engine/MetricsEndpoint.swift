import Components
import CoreMetrics
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(Host) @_spi(Components) import Pipeline
import Prometheus
import Synchronization

/// The HTTP server of `run --metrics ADDRESS`, on SwiftNIO: `/metrics` (Prometheus text),
/// `/health` (the process is live), `/ready` (every source is connected), `/stats` (JSON),
/// `/tap` (the elements passing a component, as JSON Lines, for `rivulet tap`). It listens on
/// the address given and nowhere else.
final class MetricsEndpoint: Sendable {
    private let channel: any Channel
    /// The port it listens on (the one given, or the system's choice for port 0).
    let port: Int

    /// Listens on `host:port`: with `metrics`, `/metrics`, `/health`, `/ready`; with `live`, the
    /// live view's page and its routes; `/stats` and `/tap` always (both need them).
    init(
        host: String, port: Int, exporter: RunMetricsExporter, metrics: Bool = true, live: LiveView? = nil,
        limits: HTTPConnectionLimits = .standard
    ) throws {
        // Idle clients are closed after a while and are never more than the cap (see HTTPConnectionGuard).
        let connections = HTTPConnections(limits: limits)
        let bootstrap = HTTPConnections.accepting(ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton))
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandlers(
                        HTTPConnectionGuard(connections),
                        MetricsHandler(exporter: exporter, metrics: metrics, live: live))
                }
            }
        channel = try bootstrap.bind(host: host, port: port).wait()
        self.port = channel.localAddress?.port ?? port
    }

    func stop() {
        channel.close(promise: nil)
    }
}

/// One connection: answers each GET from the exporter.
private final class MetricsHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let exporter: RunMetricsExporter
    private let metrics: Bool
    private let live: LiveView?
    /// `/events` being streamed: its timer.
    private var streaming: RepeatedTask?
    private var head: HTTPRequestHead?
    /// A `/tap` being streamed: its tap, the component, what is left to send, the timer.
    private var tapping: (tap: Tap, meter: ComponentMeter, left: Int?, timer: RepeatedTask)?

    init(exporter: RunMetricsExporter, metrics: Bool, live: LiveView?) {
        self.exporter = exporter
        self.metrics = metrics
        self.live = live
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let parts = head.uri.split(separator: "?", maxSplits: 1).map(String.init)
            let path = parts.first ?? head.uri
            let query = parts.count > 1 ? parts[1] : ""
            if path == "/tap" && head.method == .GET {
                return startTap(context: context, head: head, query: query)
            }
            if path == "/events" && head.method == .GET, live != nil {
                return startEvents(context: context)
            }
            let (status, type, body) = answer(head.method, path, query: query)
            var headers = HTTPHeaders([
                ("Content-Type", type), ("Content-Length", "\(body.count)"), ("X-Content-Type-Options", "nosniff"),
            ])
            // The page loads nothing but its own routes.
            if type.hasPrefix("text/html") {
                headers.add(
                    name: "Content-Security-Policy",
                    value: "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
            }
            if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                promise: nil)
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            let keepAlive = head.isKeepAlive
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { bound.value.close(promise: nil) }
            }
        }
    }

    /// The end of a tap's stream: a line no JSON starts with, then what was dropped.
    static let tapEnd: UInt8 = 0x1E

    /// Streams the elements passing a component until `limit` were sent or it ends: the
    /// connection closes then (HTTP/1.0, no length). Query: `place=ops.1&limit=10`.
    private func startTap(context: ChannelHandlerContext, head: HTTPRequestHead, query: String) {
        let fields = Self.fields(query)
        let limit = fields["limit"].flatMap(Int.init)
        if let text = fields["limit"], (limit ?? 0) < 1 {
            let message = "{\"error\":\"limit must be a whole number of at least 1, got '\(text)'\"}\n"
            return respond(context, head, .badRequest, "application/json", Array(message.utf8), keepAlive: false)
        }
        let meter: ComponentMeter
        switch exporter.meter(at: fields["place"]) {
        case .success(let found): meter = found
        case .failure(let problem):
            var bytes: [UInt8] = []
            JSONSerializer.write(["error": Value.string(problem.message)], to: &bytes)
            return respond(context, head, .notFound, "application/json", bytes + [0x0A], keepAlive: false)
        }
        let headers = HTTPHeaders([("Content-Type", "application/x-ndjson"), ("Connection", "close")])
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_0, status: .ok, headers: headers))), promise: nil)
        let tap = Tap()
        meter.attach(tap)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(20), delay: .milliseconds(50)) {
            [weak self] _ in self?.sendTapped(context: bound.value)
        }
        tapping = (tap, meter, limit, timer)
    }

    private func sendTapped(context: ChannelHandlerContext) {
        // A reader that does not keep up leaves the lines in the tap, which then drops (and
        // counts) what does not fit, rather than growing the connection's buffer.
        guard var tapping, context.channel.isWritable else { return }
        let ended = tapping.meter.isEnded
        var (lines, dropped) = tapping.meter.take(tapping.tap)
        if let left = tapping.left, lines.count > left { lines.removeLast(lines.count - left) }
        if !lines.isEmpty {
            // Elements can hold a secret the pipeline read (a signed URL): masked as everywhere.
            let joined = Array(lines.joined())
            let bytes = Secrets.shared.redact(bytes: joined) ?? joined
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
        }
        tapping.left = tapping.left.map { $0 - lines.count }
        self.tapping = tapping
        if tapping.left == 0 || (ended && lines.isEmpty) {
            stopTap()
            let end = [Self.tapEnd] + Array("dropped \(dropped)\n".utf8)
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: end)))), promise: nil)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
        } else if dropped > 0 {
            let note = [Self.tapEnd] + Array("dropped \(dropped)\n".utf8)
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: note)))), promise: nil)
        }
    }

    /// `a=1&b=x%20y` as fields.
    static func fields(_ query: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    /// Server-sent events for the live view: the run's counts and its tables, twice a second,
    /// until the page goes away. A page that does not keep up misses snapshots, never slows the run.
    private func startEvents(context: ChannelHandlerContext) {
        let headers = HTTPHeaders([
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("Connection", "close"),
        ])
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_0, status: .ok, headers: headers))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        streaming = context.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(500)) {
            [weak self] _ in
            let context = bound.value
            guard let self, let live = self.live, context.channel.isWritable else { return }
            var object = self.exporter.stats()
            object["tables"] = live.tablesJSON()
            var bytes = Array("data: ".utf8)
            JSONSerializer.write(.object(object), to: &bytes)
            bytes += Array("\n\n".utf8)
            bytes = Secrets.shared.redact(bytes: bytes) ?? bytes
            context.writeAndFlush(
                self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
        }
    }

    private func stopTap() {
        guard let tapping else { return }
        tapping.timer.cancel()
        tapping.meter.detach(tapping.tap)
        self.tapping = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTap()
        streaming?.cancel()
        streaming = nil
        context.fireChannelInactive()
    }

    private func respond(
        _ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ status: HTTPResponseStatus, _ type: String,
        _ body: [UInt8], keepAlive: Bool
    ) {
        var headers = HTTPHeaders([("Content-Type", type), ("Content-Length", "\(body.count)")])
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { bound.value.close(promise: nil) }
        }
    }

    private func answer(_ method: HTTPMethod, _ path: String, query: String) -> (HTTPResponseStatus, String, [UInt8]) {
        let json = "application/json"
        guard method == .GET || method == .HEAD else {
            return (.methodNotAllowed, json, Array("{\"error\":\"only GET\"}\n".utf8))
        }
        if let live {
            switch path {
            case "/":
                var initial = exporter.stats()
                initial["tables"] = live.tablesJSON()
                let page = live.page(initial: .object(initial))
                return (.ok, "text/html; charset=utf-8", Secrets.shared.redact(bytes: page) ?? page)
            case "/ui.js": return (.ok, "text/javascript; charset=utf-8", LiveView.script)
            case "/graph.svg": return (.ok, "image/svg+xml", live.svg)
            case "/node":
                guard let node = Self.fields(query)["place"].flatMap({ live.nodes[$0] }) else {
                    return (.notFound, json, Array("{\"error\":\"no component at that place\"}\n".utf8))
                }
                return (.ok, json, node)
            default: break
            }
        }
        if !metrics && ["/metrics", "/health", "/ready"].contains(path) {
            return (.notFound, json, Array("{\"error\":\"no such path\"}\n".utf8))
        }
        switch path {
        case "/metrics": return (.ok, "text/plain; version=0.0.4; charset=utf-8", exporter.prometheusText())
        case "/health": return (.ok, json, Array("{\"status\":\"live\"}\n".utf8))
        case "/ready":
            return exporter.isReady
                ? (.ok, json, Array("{\"status\":\"ready\"}\n".utf8))
                : (.serviceUnavailable, json, Array("{\"status\":\"connecting\"}\n".utf8))
        case "/stats": return (.ok, json, exporter.statsJSON())
        default:
            return (
                .notFound, json, Array("{\"error\":\"no such path; try /metrics, /health, /ready or /stats\"}\n".utf8)
            )
        }
    }
}
