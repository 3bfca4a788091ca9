import Foundation

/// A blocking HTTP/1.0 GET, enough for `top` (a run's `/stats`) and `tap` (its `/tap` stream).
enum StatsClient {
    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static func get(host: String, port: Int, path: String) throws -> [UInt8] {
        var body: [UInt8] = []
        let answer = try stream(host: host, port: port, path: path) { body += $0 }
        return answer.status == 200 ? body : answer.body
    }

    /// Sends a GET; a 200 answer's body is handed over as it arrives, another's is returned
    /// whole with its status once the server has closed the connection.
    static func stream(host: String, port: Int, path: String, _ receive: ([UInt8]) -> Void) throws -> (
        status: Int, body: [UInt8]
    ) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw Failure("cannot resolve \(host)")
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { throw Failure("cannot open a socket") }
        defer { close(descriptor) }
        guard connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw Failure(
                "cannot reach \(host):\(port): \(String(cString: strerror(errno))) (is a run serving --metrics there?)")
        }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: \(host)\r\n\r\n".utf8)
        guard write(descriptor, request, request.count) == request.count else {
            throw Failure("cannot send to \(host):\(port)")
        }
        var head: [UInt8] = []
        var status: Int?
        var refused: [UInt8] = []
        func hand(_ bytes: [UInt8]) {
            if status == 200 { receive(bytes) } else { refused += bytes }
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            if status != nil {
                hand(Array(buffer[0..<count]))
                continue
            }
            head += buffer[0..<count]
            guard let end = head.firstRange(of: Array("\r\n\r\n".utf8)) else { continue }
            let line = String(decoding: head[..<end.lowerBound], as: UTF8.self)
            status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            if end.upperBound < head.count { hand(Array(head[end.upperBound...])) }
        }
        guard let status else { throw Failure("\(host):\(port) closed the connection without an answer") }
        return (status, refused)
    }
}
