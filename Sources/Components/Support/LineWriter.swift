#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes whole lines to a file descriptor through a buffer: the buffer is only ever cut at a
/// line's end, so whoever reads the file (or a killed run's output) never sees half a line.
final class LineWriter {
    private let descriptor: Int32
    // Used on the pipeline's thread only; appended to for every line written.
    @exclusivity(unchecked)
    private var buffer: [UInt8] = []
    private let flushThreshold: Int
    private(set) var failure: String?

    init(descriptor: Int32, flushThreshold: Int = 64 * 1024) {
        self.descriptor = descriptor
        self.flushThreshold = flushThreshold
        buffer.reserveCapacity(flushThreshold + 1024)
    }

    /// Appends one line (a newline is added).
    func writeLine(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
        buffer.append(0x0A)
        if buffer.count >= flushThreshold { flush() }
    }

    /// Appends one line built in place by `body` (a newline is added), saving a copy.
    func writeLine(building body: (inout [UInt8]) -> Void) {
        body(&buffer)
        buffer.append(0x0A)
        if buffer.count >= flushThreshold { flush() }
    }

    /// Appends one line of text.
    func writeLine(_ text: String) {
        writeLine(text.utf8)
    }

    /// Appends text with no newline, for terminal output that manages its own lines.
    func writeRaw(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= flushThreshold { flush() }
    }

    /// Writes out everything buffered.
    func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { raw in
                write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
                break
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
