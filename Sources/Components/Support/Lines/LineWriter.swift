import Pipeline

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
    /// The process's secrets, held here: reading `Secrets.shared` for every line retains it.
    private let secrets = Secrets.shared
    /// The first write that failed; later output is dropped.
    private(set) var failure: WriteError?

    /// Page-aligned mode (files): the writer knows the file's size, lays out lines so that no line
    /// under a page crosses a page boundary, and writes only up to a page boundary until `close`.
    private let pageAligned: Bool
    private var fileOffset = 0
    /// Told the size of every write(2) that wrote something (a watched run counts them).
    var onWrite: ((Int) -> Void)?
    static let pageSize = 4096

    /// A writer to `descriptor`, whose file is `startOffset` bytes long (for `writtenOffset`);
    /// `pageAlignedFrom` turns on page-aligned mode from that offset.
    init(descriptor: Int32, flushThreshold: Int = 64 * 1024, pageAlignedFrom offset: Int? = nil, startOffset: Int = 0) {
        self.descriptor = descriptor
        self.flushThreshold = flushThreshold
        self.pageAligned = offset != nil
        self.fileOffset = offset ?? startOffset
        buffer.reserveCapacity(flushThreshold + 2 * Self.pageSize)
    }

    /// Before a line of `length` bytes (newline included) is appended: if it would cross a page
    /// boundary, pad the line before it with spaces (JSON allows trailing white space), so that the
    /// boundary falls between lines. Linux can cut a write(2) at a page boundary when the process is
    /// killed; with boundaries only between lines, a kill leaves whole lines.
    private func alignForLine(of length: Int) {
        guard pageAligned, length <= Self.pageSize, let last = buffer.last, last == 0x0A else { return }
        let position = fileOffset + buffer.count
        let inPage = position % Self.pageSize
        guard inPage != 0, inPage + length > Self.pageSize else { return }
        buffer.removeLast()
        buffer.append(contentsOf: repeatElement(0x20, count: Self.pageSize - inPage))
        buffer.append(0x0A)
    }

    /// Appends one line (a newline is added); secret values in it are masked.
    func writeLine(_ bytes: some Collection<UInt8>) {
        if let masked = secrets.redact(bytes: bytes) { return writeLine(masked) }
        alignForLine(of: bytes.underestimatedCount + 1)
        buffer.append(contentsOf: bytes)
        buffer.append(0x0A)
        if buffer.count >= flushThreshold { flush() }
    }

    /// Appends one line built in place by `body` (a newline is added), saving a copy.
    func writeLine(building body: (inout [UInt8]) -> Void) {
        if !secrets.isEmpty {
            var line: [UInt8] = []
            body(&line)
            return writeLine(line)
        }
        guard pageAligned else {
            body(&buffer)
            buffer.append(0x0A)
            if buffer.count >= flushThreshold { flush() }
            return
        }
        // Build the line in place; only when it would cross a page boundary (about once a page) is it
        // moved right, past spaces that pad the line before it.
        let start = buffer.count
        body(&buffer)
        buffer.append(0x0A)
        let length = buffer.count - start
        let inPage = (fileOffset + start) % Self.pageSize
        if start > 0, length <= Self.pageSize, inPage != 0, inPage + length > Self.pageSize, buffer[start - 1] == 0x0A {
            buffer.insert(contentsOf: repeatElement(0x20, count: Self.pageSize - inPage), at: start - 1)
        }
        if buffer.count >= flushThreshold { flush() }
    }

    /// Appends one line of text.
    func writeLine(_ text: String) {
        writeLine(text.utf8)
    }

    /// Appends text with no newline, for terminal output that manages its own lines.
    func writeRaw(_ text: String) {
        buffer.append(contentsOf: secrets.redact(text).utf8)
        if buffer.count >= flushThreshold { flush() }
    }

    /// Writes out what is buffered: in page-aligned mode, only up to the last page boundary (the
    /// rest waits for more lines or `close`); otherwise everything.
    func flush() {
        guard pageAligned else { return write(upTo: buffer.count) }
        let boundary = (fileOffset + buffer.count) / Self.pageSize * Self.pageSize - fileOffset
        if boundary > 0 { write(upTo: boundary) }
    }

    /// Writes out everything, page boundary or not (the end of the run).
    func flushAll() {
        write(upTo: buffer.count)
    }

    /// The offset in the file just past what was written out (in page-aligned mode, from the
    /// file's size at the start).
    var writtenOffset: Int { fileOffset }

    /// What is buffered and not yet written out.
    var buffered: [UInt8] { buffer }

    /// Buffers bytes as they were buffered when a checkpoint was taken (no masking, no padding:
    /// they were masked and laid out then).
    func restoreBuffered(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    /// Throws the write error, if one happened.
    func check() throws(WriteError) {
        if let failure { throw failure }
    }

    private func write(upTo end: Int) {
        guard failure == nil else { return buffer.removeAll(keepingCapacity: true) }
        var offset = 0
        while offset < end {
            let written = buffer.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + offset, end - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                failure = WriteError(code: errno)
                buffer.removeAll(keepingCapacity: true)
                return
            }
            offset += written
        }
        fileOffset += offset
        buffer.removeFirst(offset)
        if offset > 0 { onWrite?(offset) }
    }
}

/// A failed write(2), fsync(2), close(2) or rename(2): its errno.
struct WriteError: Error, CustomStringConvertible {
    let code: Int32

    /// The reader went away (a closed pipe, as after `| head -1`).
    var isBrokenPipe: Bool { code == EPIPE }

    var description: String { String(cString: strerror(code)) }
}

/// Standard output was closed by its reader (`rivulet run … | head -1`): the run ends quietly
/// with the status of a process ended by SIGPIPE.
public struct StandardOutputClosed: Error, CustomStringConvertible {
    /// What happened.
    public var description: String { "standard output was closed" }
}
