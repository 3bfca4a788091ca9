import Foundation

/// Plain HTTP on 127.0.0.1 for the binary's tests: a request to a run's --metrics endpoint, a
/// metric read from its page, the ports a process listens on, a free port (`freeLoopbackPort`).
public enum LoopbackHTTP {
    /// Calls `body` (connect, bind) with 127.0.0.1:`port` as a socket address.
    public static func withLoopback(_ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// A GET on 127.0.0.1:`port`: the status and the body (nil when nothing answers).
    public static func get(_ port: Int, _ path: String) -> (status: Int, body: String)? {
        exchange(port, "GET", path)
    }

    /// One request on 127.0.0.1:`port` (a JSON body, if given), HTTP/1.0 or 1.1 with the
    /// connection closed after it (chromedriver answers only 1.1): the status and the body.
    public static func exchange(
        _ port: Int, _ method: String, _ path: String, body: [UInt8]? = nil, version: String = "1.0"
    )
        -> (status: Int, body: String)?
    {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        guard withLoopback(port, { connect(descriptor, $0, $1) }) == 0 else { return nil }
        var head =
            version == "1.0"
            ? "\(method) \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n"
            : "\(method) \(path) HTTP/\(version)\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        guard write(descriptor, request, request.count) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            response += buffer[0..<count]
            // A body of known length is complete (chromedriver says close but keeps the socket).
            if let length = Self.completeLength(response), response.count >= length { break }
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n"),
            let status = Int(text.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return (status, String(text[split.upperBound...]))
    }

    /// The whole response's length once its head is in and names a Content-Length.
    public static func completeLength(_ response: [UInt8]) -> Int? {
        let text = String(decoding: response, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        for line in text[..<end.lowerBound].split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length",
                let length = Int(parts[1].trimmingCharacters(in: .whitespaces))
            {
                return text[..<end.upperBound].utf8.count + length
            }
        }
        return nil
    }

    /// The metrics page, once `metric` with `labels` reads `value` (or after 10 s).
    public static func metrics(_ port: Int, once metric: String, _ labels: [String], is value: Double) -> String {
        var metrics = ""
        let deadline = Date(timeIntervalSinceNow: 10)
        repeat {
            Thread.sleep(forTimeInterval: 0.05)
            metrics = get(port, "/metrics")?.body ?? ""
        } while sample(metrics, metric, labels) != value && Date() < deadline
        return metrics
    }

    /// The value of the sample of `metric` whose labels include every one of `labels`.
    public static func sample(_ text: String, _ metric: String, _ labels: [String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(metric + "{") {
            guard labels.allSatisfy({ line.contains($0) }), let value = line.split(separator: " ").last else {
                continue
            }
            return Double(value)
        }
        return nil
    }

    /// The TCP addresses `pid` listens on, as /proc shows them (`0100007F:1F90`).
    public static func listeningAddresses(of pid: Int32) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let inodes = Set(
            fds.compactMap { fd -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst(8).dropLast())
            })
        var addresses: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // local_address is field 1, st field 3 (0A: LISTEN), inode field 9.
                if fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])) {
                    addresses.append(String(fields[1]))
                }
            }
        }
        return addresses
    }
}
