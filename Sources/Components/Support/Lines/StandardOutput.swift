@_spi(Components) import Pipeline
@_spi(Components) import Reactive

#if canImport(Glibc)
    import Glibc
#endif

/// Standard output for a whole pipeline: every sink writing there (stdout, table, the screen)
/// shares one buffer, so lines come out in the order they were produced. A burst of lines is
/// written at once, soon after it ends (a flush is scheduled on the pipeline's scheduler), so a
/// slow pipeline's lines appear as they happen and a fast one still writes in large chunks.
final class StandardOutput {
    private let writer: LineWriter = {
        let writer = LineWriter(descriptor: 1)
        writer.clearsStatusLine = isatty(1) == 1
        return writer
    }()
    private var flushScheduled = false
    /// The drawing on the terminal (a `prompt`, a `table`), if there is one: plain lines go above it.
    weak var screen: Screen?

    func writeLine(_ bytes: some Collection<UInt8>, scheduler: any SchedulerType) {
        if let screen, screen.isDrawn {
            screen.printAbove(bytes)
            return
        }
        writer.writeLine(bytes)
        scheduleFlush(scheduler)
    }

    func writeLine(_ text: String, scheduler: any SchedulerType) {
        writeLine(text.utf8, scheduler: scheduler)
    }

    func writeRaw(_ text: String) {
        writer.writeRaw(text)
        writer.flush()
    }

    private func scheduleFlush(_ scheduler: any SchedulerType) {
        guard !flushScheduled else { return }
        flushScheduled = true
        scheduler.schedule { [self] in
            flushScheduled = false
            writer.flush()
        }
    }

    func flush() {
        writer.flush()
    }

    /// Counts the bytes and write calls on `meter` (`sink_bytes_total`, `sink_writes_total`):
    /// the first stdout sink's, when several share standard output.
    func count(on meter: ComponentMeter) {
        guard writer.onWrite == nil else { return }
        writer.onWrite = { bytes in
            meter.count("sink_bytes_total", by: bytes)
            meter.count("sink_writes_total")
        }
    }

    /// Throws what went wrong writing standard output, for `component`: a closed pipe as
    /// `StandardOutputClosed`, anything else as a pipeline error naming the component.
    func check(_ context: ComponentContext) throws {
        do { try writer.check() } catch {
            if error.isBrokenPipe { throw StandardOutputClosed() }
            throw context.error("writing to standard output: \(error)")
        }
    }
}
