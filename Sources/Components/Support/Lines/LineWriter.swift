import Dispatch
@_spi(Components) import Pipeline
import Synchronization

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

    private var fileOffset = 0
    /// For a regular file: where write-back was last started, or nil (a pipe, a terminal).
    private var writeBackFrom: Int?
    /// Told the size of every write(2) that wrote something (a watched run counts them).
    var onWrite: ((Int) -> Void)?
    /// Whether the descriptor is the terminal the progress line is drawn on: writes clear it first.
    var clearsStatusLine = false

    /// A writer to `descriptor`, whose file is `startOffset` bytes long (for `writtenOffset`).
    /// With `startsWriteBack` (a regular file), the kernel is asked to start writing what was
    /// written to the disk every `writeBackEvery` bytes, in the background. With `truncates`, the
    /// file is cut to nothing on another thread first, and nothing is written (or flushed) before
    /// that ends.
    init(
        descriptor: Int32, flushThreshold: Int = 64 * 1024, startOffset: Int = 0, startsWriteBack: Bool = false,
        writeBackEvery: Int = 4 << 20, truncates: Bool = false
    ) {
        self.descriptor = descriptor
        self.flushThreshold = flushThreshold
        self.fileOffset = startOffset
        self.writeBackEvery = writeBackEvery
        writeBackFrom = startsWriteBack ? startOffset : nil
        buffer.reserveCapacity(flushThreshold + 4096)
        if truncates {
            truncatedInBackground = true
            truncation = BackgroundTruncation(descriptor: descriptor)
            if truncation == nil, ftruncate(descriptor, 0) != 0 { failure = WriteError(code: errno) }
        }
    }

    /// The truncation still under way, if any.
    private var truncation: BackgroundTruncation?
    /// Whether the file was cut to nothing on another thread (for tests).
    private(set) var truncatedInBackground = false

    /// How many bytes are written between two starts of write-back.
    private let writeBackEvery: Int
    /// How many times write-back was started (for tests).
    private(set) var writeBacksStarted = 0
    /// Whether write-back is started as the file grows.
    var startsWriteBack: Bool { writeBackFrom != nil }

    /// Appends one line (a newline is added); secret values in it are masked.
    func writeLine(_ bytes: some Collection<UInt8>) {
        if let masked = secrets.redact(bytes: bytes) { return writeLine(masked) }
        buffer.append(contentsOf: bytes)
        buffer.append(0x0A)
        if buffer.count >= flushThreshold { flushFull() }
    }

    /// Appends one line built in place by `body` (a newline is added), saving a copy.
    func writeLine(building body: (inout [UInt8]) -> Void) {
        if !secrets.isEmpty {
            var line: [UInt8] = []
            body(&line)
            return writeLine(line)
        }
        body(&buffer)
        buffer.append(0x0A)
        if buffer.count >= flushThreshold { flushFull() }
    }

    /// Appends one line of text.
    func writeLine(_ text: String) {
        writeLine(text.utf8)
    }

    /// Appends text with no newline, for terminal output that manages its own lines.
    func writeRaw(_ text: String) {
        buffer.append(contentsOf: secrets.redact(text).utf8)
        if buffer.count >= flushThreshold { flushFull() }
    }

    /// The write out a full buffer asks for. While the old file is still being cut, lines are kept
    /// instead (up to 4 MB): the run's first lines are ready within a millisecond of its start.
    private func flushFull() {
        if let truncation, !truncation.isDone, buffer.count < 4 << 20 { return }
        flush()
    }

    /// Writes out everything buffered, which always ends at a line's end (or where `writeRaw` left it).
    func flush() {
        write(upTo: buffer.count)
    }

    /// The offset in the file just past what was written out, counted from the file's size at the
    /// start.
    var writtenOffset: Int { fileOffset }

    /// What is buffered and not yet written out.
    var buffered: [UInt8] { buffer }

    /// Buffers bytes as they were buffered when a checkpoint was taken (no masking: they were
    /// masked then). Checkpoints of earlier versions kept such bytes; today's keep none.
    func restoreBuffered(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    /// Throws the write error, if one happened.
    func check() throws(WriteError) {
        if let failure { throw failure }
    }

    /// Waits for the old file's cut, if one is under way (a failed cut is the write error): an
    /// owner that closes the descriptor calls it first.
    func waitForTruncation() {
        guard let truncation else { return }
        self.truncation = nil
        if let code = truncation.wait() { failure = WriteError(code: code) }
    }

    private func write(upTo end: Int) {
        // Nothing to write (a run's first checkpoint): no need to wait for the cut yet.
        if end == 0 && truncation != nil { return }
        waitForTruncation()
        guard failure == nil else { return buffer.removeAll(keepingCapacity: true) }
        guard !clearsStatusLine || end == 0 else {
            return TerminalStatusLine.shared.writing { writeOut(upTo: end) }
        }
        writeOut(upTo: end)
    }

    private func writeOut(upTo end: Int) {
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
        startWriteBackIfDue()
    }

    /// Starts writing the pages written since the last start to the disk, without waiting: the
    /// `fsync` of a checkpoint or of the run's end then waits for what is left, not for the whole
    /// file (17 MB took it 9 ms here; a few MB at a time in the background leave it about 1 ms).
    private func startWriteBackIfDue() {
        guard let from = writeBackFrom, fileOffset - from >= writeBackEvery, let start = Self.syncFileRange else {
            return
        }
        // Advice: a file system that cannot do it (or an error) changes nothing but the wait at the end.
        _ = start(descriptor, Int64(from), Int64(fileOffset - from), Self.syncFileRangeWrite)
        writeBackFrom = fileOffset
        writeBacksStarted += 1
    }

    /// `sync_file_range(2)`, which Swift's Glibc module does not declare (it needs `_GNU_SOURCE`):
    /// looked up in the C library once.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()
    /// `SYNC_FILE_RANGE_WRITE`: start writing out the range's dirty pages, do not wait.
    private static let syncFileRangeWrite: UInt32 = 2
}

/// `ftruncate(2)` to nothing, run on a GCD thread on a duplicate of the descriptor (so closing the
/// writer's own never races it): freeing a large file's old blocks waits for the device (4-6 ms for
/// W2's 17 MB output here, most of it asleep), which the run's start then overlaps.
private final class BackgroundTruncation: @unchecked Sendable {  // `code` is read after `done` is signalled
    private let done = DispatchSemaphore(value: 0)
    private let finished = Atomic<Bool>(false)
    private var code: Int32 = 0

    init?(descriptor: Int32) {
        let copy = dup(descriptor)
        guard copy >= 0 else { return nil }
        DispatchQueue.global().async { [self] in
            if ftruncate(copy, 0) != 0 { code = errno }
            Glibc.close(copy)
            finished.store(true, ordering: .releasing)
            done.signal()
        }
    }

    /// Whether it has ended (then `wait` does not block).
    var isDone: Bool { finished.load(ordering: .acquiring) }

    /// Waits for the truncation to end; its errno if it failed.
    func wait() -> Int32? {
        done.wait()
        return code == 0 ? nil : code
    }
}

/// A failed write(2), fsync(2), close(2), ftruncate(2) or rename(2): its errno.
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
