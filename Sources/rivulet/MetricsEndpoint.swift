import Components
import CoreMetrics
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(Host) import Pipeline
import Prometheus
import Synchronization

/// What `run --metrics` shows of a run: its meters as swift-metrics counters exported by
/// swift-prometheus, and the same as a JSON snapshot for `rivulet top`.
final class RunMetricsExporter: Sendable {
    private let current: Mutex<RunMeters>
    private var meters: RunMeters { current.withLock { $0 } }
    private let pipeline: String
    private let started = ContinuousClock.now
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// What each counter was last told, by counter: the run's atomics are read at each scrape and
    /// the difference added, so the pipeline pays one relaxed add an event and nothing more.
    private let reported = Mutex<Reported>(Reported())

    private struct Reported {
        var counters: [String: (counter: CoreMetrics.Counter, value: Int)] = [:]
        var gauges: [String: CoreMetrics.Gauge] = [:]
        var timers: [String: CoreMetrics.Timer] = [:]
    }

    init(meters: RunMeters, pipeline: String) {
        current = Mutex(meters)
        self.pipeline = pipeline
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Shows the meters of a new version of the pipeline (`--watch`): the counters go on from
    /// their totals, so they never go down.
    func replace(_ meters: RunMeters) {
        reported.withLock { reported in
            for key in reported.counters.keys { reported.counters[key]?.value = 0 }
            current.withLock { $0 = meters }
        }
    }

    /// Records how long a checkpoint took to commit (`--state`): a histogram per pipeline.
    func observeCheckpoint(seconds: Double) {
        reported.withLock { reported in
            let timer =
                reported.timers["checkpoint"]
                ?? CoreMetrics.Timer(
                    label: "rivulet_checkpoint_duration_seconds", dimensions: [("pipeline", pipeline)],
                    preferredDisplayUnit: .seconds, factory: factory)
            reported.timers["checkpoint"] = timer
            timer.recordNanoseconds(Int64(seconds * 1e9))
        }
    }

    /// The Prometheus text exposition of every component's counters.
    func prometheusText() -> [UInt8] {
        reported.withLock { reported in
            for meter in meters.components {
                let labels = [
                    ("pipeline", pipeline), ("kind", meter.kind.rawValue), ("component", meter.component),
                    ("place", meter.place),
                ]
                func report(_ name: String, _ value: Int?, extra: [String] = []) {
                    guard let value else { return }
                    let dimensions = labels + (extra.count == 2 ? [(extra[0], extra[1])] : [])
                    let key = "\(name) \(meter.place) \(extra.joined(separator: "="))"
                    let entry =
                        reported.counters[key]
                        ?? (CoreMetrics.Counter(label: name, dimensions: dimensions, factory: factory), 0)
                    if value > entry.value { entry.counter.increment(by: value - entry.value) }
                    reported.counters[key] = (entry.counter, max(value, entry.value))
                }
                if meter.kind != .sink { report("rivulet_elements_out_total", meter.elements) }
                if meter.kind != .source { report("rivulet_elements_in_total", meter.elementsIn ?? 0) }
                report("rivulet_errors_total", meter.errors)
                // What the component counts itself: counters end in _total, the rest are gauges.
                for (extra, value) in meter.extraValues.sorted(by: { $0.key.name < $1.key.name }) {
                    let name = "rivulet_" + extra.name
                    if name.hasSuffix("_total") {
                        report(name, value, extra: extra.label)
                    } else {
                        let key = "\(name) \(meter.place) \(extra.label.joined(separator: "="))"
                        let dimensions = labels + (extra.label.count == 2 ? [(extra.label[0], extra.label[1])] : [])
                        let gauge =
                            reported.gauges[key]
                            ?? CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
                        reported.gauges[key] = gauge
                        gauge.record(value)
                    }
                }
                for (name, durations) in meter.takeDurations() {
                    let key = "\(name) \(meter.place)"
                    let timer =
                        reported.timers[key]
                        ?? CoreMetrics.Timer(
                            label: "rivulet_" + name, dimensions: labels, preferredDisplayUnit: .seconds,
                            factory: factory)
                    reported.timers[key] = timer
                    for seconds in durations { timer.recordNanoseconds(Int64(seconds * 1e9)) }
                }
            }
        }
        var text: [UInt8] = []
        registry.emit(into: &text)
        let ready = meters.readiness.isReady ? 1 : 0
        text += Array(
            """
            # TYPE rivulet_ready gauge
            rivulet_ready{pipeline="\(pipeline)"} \(ready)
            # TYPE rivulet_uptime_seconds gauge
            rivulet_uptime_seconds{pipeline="\(pipeline)"} \(uptime)

            """.utf8)
        return text
    }

    private var uptime: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `/stats`: the pipeline, whether it is ready, and one object a component.
    func statsJSON() -> [UInt8] {
        var bytes: [UInt8] = []
        JSONSerializer.write(.object(stats()), to: &bytes)
        return bytes + [0x0A]
    }

    /// The snapshot `/stats` serves, as an object (the live view adds its tables to it).
    func stats() -> JSONObject {
        let components: [Value] = meters.components.map { meter in
            var object = JSONObject()
            object["place"] = .string(meter.place)
            object["kind"] = .string(meter.kind.rawValue)
            object["component"] = .string(meter.component)
            if meter.kind != .source { object["in"] = .int(meter.elementsIn ?? 0) }
            if meter.kind != .sink { object["out"] = .int(meter.elements) }
            object["errors"] = .int(meter.errors)
            object["ended"] = .bool(meter.isEnded)
            let byLabel = Self.byLabel(meter.extraValues)
            if !byLabel.isEmpty { object["byLabel"] = .array(byLabel) }
            return .object(object)
        }
        var object = JSONObject()
        object["pipeline"] = .string(pipeline)
        object["ready"] = .bool(meters.readiness.isReady)
        object["uptimeSeconds"] = .double(uptime)
        object["components"] = .array(components)
        return object
    }

    var isReady: Bool { meters.readiness.isReady }

    /// A component's counters and gauges that carry a label (a group's `nats_partition_held` by
    /// `partition`, an HTTP source's requests by `status`), one table a label: `{label, columns,
    /// rows}`, a row a value of the label (numbers in numeric order), a column a metric.
    static func byLabel(_ values: [ComponentMeter.ExtraKey: Int]) -> [Value] {
        var tables: [String: [String: [String: Int]]] = [:]
        for (key, value) in values where key.label.count == 2 {
            tables[key.label[0], default: [:]][key.label[1], default: [:]][key.name] = value
        }
        return tables.keys.sorted().map { label in
            let rows = tables[label]!
            let columns = Set(rows.values.flatMap(\.keys)).sorted()
            let ordered = rows.keys.sorted { a, b in
                if let a = Int(a), let b = Int(b) { return a < b }
                return a < b
            }
            var table = JSONObject()
            table["label"] = .string(label)
            table["columns"] = .array(columns.map(Value.string))
            table["rows"] = .array(
                ordered.map { name in
                    .array([.string(name)] + columns.map { rows[name]![$0].map(Value.int) ?? .null })
                })
            return .object(table)
        }
    }

    /// The component `place` means (a place, a stream's name or a glob: `PlacePattern`);
    /// without one, the first sink (what is written).
    func meter(at place: String?) -> Result<ComponentMeter, PlacePattern.PatternError> {
        let all = meters.components
        guard let place else {
            guard let meter = all.first(where: { $0.kind == .sink }) ?? all.last else {
                return .failure(.init("the run has no components"))
            }
            return .success(meter)
        }
        return PlacePattern(text: place).single(among: all.map { ($0.place, $0.component) }).map { chosen in
            all.first { $0.place == chosen }!
        }
    }

}

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
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { context.close(promise: nil) }
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
        let timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(20), delay: .milliseconds(50)) {
            [weak self] _ in self?.sendTapped(context: context)
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
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
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
        streaming = context.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(500)) {
            [weak self] _ in
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
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { context.close(promise: nil) }
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
