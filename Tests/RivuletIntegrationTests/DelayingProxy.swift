import BinaryTestSupport
import Foundation

/// A TCP proxy on 127.0.0.1 to a server at `upstreamPort` that holds what a client sends for
/// `delay` before passing it on (what the server sends back passes at once): a slow or busy
/// link, over which a request reaches the server well after the client sent it. Writes never
/// raise SIGPIPE (the test process would die of a peer that closed).
final class DelayingProxy: @unchecked Sendable {
    /// The port clients connect to.
    private(set) var port = 0
    private let upstreamPort: Int
    private let delay: TimeInterval
    private let listener: Int32
    private let lock = NSLock()
    private var sockets: [Int32] = []

    init(upstreamPort: Int, delay: TimeInterval) throws {
        self.upstreamPort = upstreamPort
        self.delay = delay
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw NSError(domain: "the proxy cannot listen: errno \(errno)", code: 1)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptConnections() }.start()
    }

    /// Closes the listener and every connection (each pump ends on its socket's error).
    func stop() {
        let open = lock.withLock {
            defer { sockets = [] }
            return sockets + [listener]
        }
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptConnections() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(upstreamPort))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            lock.withLock { sockets += [client, server] }
            let held = HeldBytes()
            Thread { [self] in hold(from: client, into: held) }.start()
            Thread { Self.release(held, to: server) }.start()
            Thread { Self.pump(from: server, to: client) }.start()
        }
    }

    /// Reads what the client sends, each chunk due `delay` after it came.
    private func hold(from source: Int32, into held: HeldBytes) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(source, &buffer, buffer.count)
            held.add(count > 0 ? Array(buffer[0..<count]) : nil, due: Date(timeIntervalSinceNow: delay))
            if count <= 0 { return }
        }
    }

    /// Writes each held chunk to the server once it is due, in order; closes at the end.
    private static func release(_ held: HeldBytes, to target: Int32) {
        while let chunk = held.next() {
            var offset = 0
            while offset < chunk.count {
                let written = chunk[offset...].withUnsafeBytes {
                    send(target, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written <= 0 { return }
                offset += written
            }
        }
        shutdown(target, Int32(SHUT_WR))
    }

    private static func pump(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(source, &buffer, buffer.count)
            if count <= 0 { break }
            var offset = 0
            while offset < count {
                let written = buffer[offset..<count].withUnsafeBytes {
                    send(target, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written <= 0 { return }
                offset += written
            }
        }
        shutdown(target, Int32(SHUT_WR))
    }
}

/// Chunks waiting for their time: nil marks the end of the client's stream.
private final class HeldBytes: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [(bytes: [UInt8]?, due: Date)] = []

    func add(_ bytes: [UInt8]?, due: Date) {
        condition.withLock {
            chunks.append((bytes, due))
            condition.signal()
        }
    }

    /// The next chunk once it is due; nil at the end.
    func next() -> [UInt8]? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let first = chunks.first {
                if first.due <= Date() {
                    chunks.removeFirst()
                    return first.bytes
                }
                _ = condition.wait(until: first.due)
            } else {
                condition.wait()
            }
        }
    }
}
