import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// How long a server waits for a request and how many connections it keeps: a client that
/// opens connections and sends nothing, half a header, or a body shorter than its
/// Content-Length must not hold a file descriptor for ever (20,000 of them once exhausted the
/// process's limit, and every client after timed out).
public struct HTTPConnectionLimits: Sendable {
    /// A request must arrive whole within this of the connection opening or of the previous
    /// answer's end; otherwise the connection is closed.
    public var requestTimeout: TimeAmount
    /// Connections open at most: one more closes the one that has waited longest for a request
    /// (or, when every one is being answered, is itself closed).
    public var maxConnections: Int

    /// The limits of the `--metrics` and `--ui` server, and the `httpServer` defaults.
    public static let standard = HTTPConnectionLimits(requestTimeout: .seconds(10), maxConnections: 1024)

    /// The limits given.
    public init(requestTimeout: TimeAmount, maxConnections: Int) {
        self.requestTimeout = requestTimeout
        self.maxConnections = maxConnections
    }
}

/// One server's open connections, shared by their guards: which are waiting for a request (and
/// since when), so the longest-waiting one can make room for a new one.
public final class HTTPConnections: Sendable {
    let limits: HTTPConnectionLimits
    private let state = Mutex(Registry())

    private struct Registry {
        var open = 0
        /// The connections waiting for a request, by when they began to wait (a counter).
        var waiting: [ObjectIdentifier: (channel: any Channel, since: UInt64)] = [:]
        var tick: UInt64 = 0
        /// Evicted and already counted out, not closed yet.
        var evicted: Set<ObjectIdentifier> = []
    }

    /// None open yet. The cap is lowered to leave 128 descriptors of the process's limit to the
    /// rest of the run (sinks, other connections), so accepting never runs into that limit.
    public init(limits: HTTPConnectionLimits) {
        var limits = limits
        var descriptors = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors) == 0, descriptors.rlim_cur < 1 << 30 {
            limits.maxConnections = max(1, min(limits.maxConnections, Int(descriptors.rlim_cur) - 128))
        }
        self.limits = limits
    }

    /// How many are open.
    public var openCount: Int { state.withLock { $0.open } }

    /// `bootstrap` with a listen backlog and an accept batch that keep up with a flood of
    /// connections: with the defaults the backlog filled, and a normal client's connection
    /// waited a second for the kernel to retry it.
    public static func accepting(_ bootstrap: ServerBootstrap) -> ServerBootstrap {
        bootstrap
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.maxMessagesPerRead, value: 256)
    }

    /// Admits `channel`: true, and the connection it evicts if there was no room; false when
    /// every open connection is being answered (the new one is then closed).
    func admit(_ channel: any Channel) -> (admitted: Bool, evicted: (any Channel)?) {
        state.withLock { registry in
            var evicted: (any Channel)?
            if registry.open >= limits.maxConnections {
                guard let oldest = registry.waiting.min(by: { $0.value.since < $1.value.since }) else {
                    return (false, nil)
                }
                registry.waiting[oldest.key] = nil
                registry.evicted.insert(oldest.key)
                registry.open -= 1
                evicted = oldest.value.channel
            }
            registry.open += 1
            registry.tick += 1
            registry.waiting[ObjectIdentifier(channel)] = (channel, registry.tick)
            return (true, evicted)
        }
    }

    /// `channel` read a whole request: it is being answered, not evictable.
    func answering(_ channel: any Channel) {
        _ = state.withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// `channel` finished an answer and waits for the next request.
    func waiting(_ channel: any Channel) {
        state.withLock { registry in
            registry.tick += 1
            registry.waiting[ObjectIdentifier(channel)] = (channel, registry.tick)
        }
    }

    /// `channel` closed (an evicted one was counted out already).
    func closed(_ channel: any Channel) {
        state.withLock { registry in
            let id = ObjectIdentifier(channel)
            registry.waiting[id] = nil
            if registry.evicted.remove(id) == nil { registry.open -= 1 }
        }
    }
}

/// Guards one connection of an HTTP server (placed after the HTTP codec): closes it when a
/// request does not arrive whole within the timeout, and admits it under the server's cap.
public final class HTTPConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler, @unchecked Sendable {
    /// What the HTTP decoder reads.
    public typealias InboundIn = HTTPServerRequestPart
    /// Passed on unchanged.
    public typealias InboundOut = HTTPServerRequestPart
    /// What the server's handler answers.
    public typealias OutboundIn = HTTPServerResponsePart
    /// Passed on unchanged.
    public typealias OutboundOut = HTTPServerResponsePart

    private let connections: HTTPConnections
    private var timer: Scheduled<Void>?
    private var admitted = false

    /// A guard for one connection of the server whose connections are `connections`.
    public init(_ connections: HTTPConnections) {
        self.connections = connections
    }

    /// Admits the connection under the cap and starts its clock.
    public func channelActive(context: ChannelHandlerContext) {
        let (admitted, evicted) = connections.admit(context.channel)
        evicted?.close(promise: nil)
        guard admitted else {
            context.close(promise: nil)
            return
        }
        self.admitted = true
        armTimer(context: context)
        context.fireChannelActive()
    }

    /// A request read whole stops the clock.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            timer?.cancel()
            timer = nil
            connections.answering(context.channel)
        }
        context.fireChannelRead(data)
    }

    /// An answer's end starts the clock again.
    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            connections.waiting(context.channel)
            armTimer(context: context)
        }
        context.write(data, promise: promise)
    }

    /// Counts the connection out.
    public func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if admitted {
            admitted = false
            connections.closed(context.channel)
        }
        context.fireChannelInactive()
    }

    private func armTimer(context: ChannelHandlerContext) {
        timer?.cancel()
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: connections.limits.requestTimeout) {
            channel.close(promise: nil)
        }
    }
}
