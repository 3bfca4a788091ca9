@_spi(Host) import Pipeline

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file (or standard input) a line at a time through a 256 KiB buffer, without reading the
/// whole file: each line is handed over as bytes, so JSON Lines are parsed straight from the buffer.
final class LineReader {
    /// The descriptor read (for `fstat` of a followed file).
    let descriptor: Int32
    private let ownsDescriptor: Bool
    // A reader is used by one thread, and the closures it calls never reach back into it: the
    // dynamic exclusivity checks on every line's accesses would buy nothing. Its memory is its
    // own, not an array's: reaching an array's bytes retains and releases it, twice a line.
    @exclusivity(unchecked) private var buffer: UnsafeMutableBufferPointer<UInt8>
    @exclusivity(unchecked) private var start = 0
    @exclusivity(unchecked) private var end = 0
    private var atEOF = false
    /// The file offset of the buffer's first byte.
    private var bufferOffset = 0
    /// The number of the line last read, from 1.
    @exclusivity(unchecked) private(set) var lineNumber = 0
    /// The object of the last line read, lent with its value and reused once given back
    /// (`giveBack`) if the pipeline dropped it.
    @exclusivity(unchecked) private var scratch = JSONParser.Scratch(lending: true)
    /// When set (a followed file), the end of the file is not the end of the input: a last line
    /// without its newline is held back, and the next call reads on from there.
    var holdsPartialLine = false
    /// The file offset just past the last line read: where reading would resume.
    var offset: Int { bufferOffset + start }
    /// The longest line read: a longer one is an error rather than unbounded memory.
    static let maximumLineBytes = 64 << 20

    /// A reader of the file at `path`, or nil (with `errno` set) if it cannot be opened.
    init?(path: String, offset: Int = 0, lineNumber: Int = 0, bufferSize: Int = 256 * 1024) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        if offset > 0 && lseek(descriptor, off_t(offset), SEEK_SET) < 0 {
            close(descriptor)
            return nil
        }
        self.bufferOffset = offset
        self.lineNumber = lineNumber
        self.descriptor = descriptor
        self.ownsDescriptor = true
        // Not zeroed: only what `read` wrote is looked at, and zeroing would touch every page of
        // a buffer of MBs before the first byte is read.
        buffer = .allocate(capacity: bufferSize)
    }

    /// A reader of an open descriptor (standard input), which it does not close.
    init(descriptor: Int32) {
        self.descriptor = descriptor
        self.ownsDescriptor = false
        buffer = .allocate(capacity: 64 * 1024)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
        buffer.deallocate()
    }

    /// Whether a whole line is already buffered (so reading it will not block).
    var hasBufferedLine: Bool {
        end > start && memchr(buffer.baseAddress! + start, 0x0A, end - start) != nil
    }

    /// Calls `body` with the next line (without its newline or a trailing carriage return);
    /// returns false at the end of the input. A read error throws.
    func nextLine<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) throws -> Result? {
        while true {
            let bytes = UnsafeBufferPointer(buffer)
            if end > start, let hit = memchr(bytes.baseAddress! + start, 0x0A, end - start) {
                let newline = bytes.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                lineNumber += 1
                let lineEnd = newline > start && bytes[newline - 1] == 0x0D ? newline - 1 : newline
                defer { start = newline + 1 }
                return try body(UnsafeBufferPointer(rebasing: bytes[start..<lineEnd]))
            }
            if atEOF {
                if holdsPartialLine {
                    atEOF = false
                    return nil
                }
                guard start < end else { return nil }
                lineNumber += 1
                defer { start = end }
                return try body(UnsafeBufferPointer(rebasing: UnsafeBufferPointer(buffer)[start..<end]))
            }
            try fill()
        }
    }

    /// The size of the buffer (a buffer handed over by `nextLines` is replaced by one at least
    /// this large).
    var capacity: Int { buffer.count }

    /// Writes the ranges of the whole lines now in the buffer (reading more when there are none)
    /// into `ranges`, as many as it holds, each without its newline or a trailing carriage return,
    /// and hands `body` the buffer and their count; `body` keeps the buffer and gives back another
    /// of at least `capacity` bytes, into which the bytes after those lines are copied, and the
    /// reader moves past them. A caller that keeps the lines takes them without copying them or
    /// their ranges (a `body` that throws keeps nothing). Returns nil at the end of the input.
    func nextLines<Result>(
        into ranges: UnsafeMutableBufferPointer<Range<Int>>,
        handingOver body: (_ buffer: UnsafeMutableBufferPointer<UInt8>, _ count: Int, _ capacity: Int) throws -> (
            Result, replacement: UnsafeMutableBufferPointer<UInt8>
        )
    ) throws -> Result? {
        while true {
            var count = 0
            var consumed = start
            do {
                let pointer = UnsafeBufferPointer(buffer)
                let base = pointer.baseAddress!
                var lineStart = start
                while count < ranges.count, lineStart < end,
                    let hit = memchr(base + lineStart, 0x0A, end - lineStart)
                {
                    let newline = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                    let lineEnd = newline > lineStart && pointer[newline - 1] == 0x0D ? newline - 1 : newline
                    ranges[count] = lineStart..<lineEnd
                    count += 1
                    lineStart = newline + 1
                }
                consumed = lineStart
            }
            if count == 0 && atEOF && !holdsPartialLine && start < end && !ranges.isEmpty {
                ranges[0] = start..<end
                count = 1
                consumed = end
            }
            if count > 0 {
                let (result, replacement) = try body(buffer, count, buffer.count)
                precondition(replacement.count >= buffer.count, "a replacement buffer smaller than the reader's")
                let rest = end - consumed
                if rest > 0 { replacement.baseAddress!.update(from: buffer.baseAddress! + consumed, count: rest) }
                buffer = replacement
                bufferOffset += consumed
                start = 0
                end = rest
                lineNumber += count
                return result
            }
            if atEOF { return nil }
            try fill()
        }
    }

    private func fill() throws {
        if start > 0 {
            let count = end - start
            if count > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + start, count) }
            end -= start
            bufferOffset += start
            start = 0
        }
        if end == buffer.count {
            guard buffer.count < Self.maximumLineBytes else {
                throw LineReaderError(
                    message: "line \(lineNumber + 1) is longer than \(Self.maximumLineBytes >> 20) MiB")
            }
            let grown = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: buffer.count * 2)
            grown.baseAddress!.initialize(from: buffer.baseAddress!, count: end)
            buffer.deallocate()
            buffer = grown
        }
        let count = read(descriptor, buffer.baseAddress! + end, buffer.count - end)
        if count < 0 {
            if errno == EINTR { return }
            throw LineReaderError(message: String(cString: strerror(errno)))
        }
        if count == 0 { atEOF = true }
        end += count
    }
}

struct LineReaderError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension LineReader {
    /// A line that is not JSON: the parser's error, the line's text and its number.
    struct MalformedLine: Error {
        /// Why (a `JSONError`, or a CSV record's `CSVRecords.Malformed`).
        let error: any Error
        let text: String
        let line: Int
    }

    /// Takes back a value `nextJSONValue` gave, once the pipeline is done with it: its object
    /// is reused for the next line if nothing else holds it (a value not given back costs a new
    /// object for the next line).
    func giveBack(_ value: consuming Value) { scratch.giveBack(consume value) }

    /// The next line that is not blank, parsed as JSON; nil at the end. A line that is not JSON
    /// throws `MalformedLine` (the reader has moved past it, so reading on skips it). Give the
    /// value back (`giveBack`) once done with it.
    func nextJSONValue() throws -> Value? {
        while true {
            let line: Value?? = try nextLine { bytes -> Value? in
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
                do throws(JSONError) {
                    return try JSONParser.parseOnDemand(bytes, reusing: &scratch)
                } catch {
                    throw MalformedLine(error: error, text: String(decoding: bytes, as: UTF8.self), line: lineNumber)
                }
            }
            guard let line else { return nil }
            if let value = line { return value }
        }
    }
}
