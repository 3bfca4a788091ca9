import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a run did, from its meters: the one line every run ends with, and the table per component
/// `--summary` adds. Pure: the command hands it the counts and the time.
struct RunSummary {
    /// How the run ended, as the summary says it.
    enum Ending: String {
        case completed, failed, interrupted, stopped
    }

    /// Elements the sources emitted, elements the sinks received, elements failed or dropped.
    var read: Int
    var written: Int
    var errors: Int
    /// Elements dropped on purpose, not errors: late ones (behind the watermark).
    var late = 0
    var seconds: Double

    /// The counts of `meters`, with `skipped` elements dropped under `onError: skip` counted as
    /// errors and `dropped` ones (late) apart.
    init(meters: RunMeters, skipped: Int, dropped: Int = 0, failed: Bool, seconds: Double) {
        let components = meters.components
        read = components.filter { $0.kind == .source }.reduce(0) { $0 + $1.elements }
        written = components.filter { $0.kind == .sink }.reduce(0) { $0 + $1.written }
        errors = skipped + (failed ? 1 : 0)
        late = dropped
        self.seconds = seconds
    }

    /// `run completed: 1000 elements read, 998 written, 2 errors in 0.41s`, with `, 5 late`
    /// after the errors when elements were late.
    func line(_ ending: Ending) -> String {
        "run \(ending.rawValue): \(read) element\(read == 1 ? "" : "s") read, \(written) written, "
            + "\(errors) error\(errors == 1 ? "" : "s")\(late > 0 ? ", \(late) late" : "") in \(Self.duration(seconds))"
    }

    /// One row per component: its place, name, elements in and out, errors.
    static func table(_ meters: RunMeters) -> String {
        var rows = [["PLACE", "COMPONENT", "IN", "OUT", "ERRORS"]]
        for meter in meters.components {
            let incoming = meter.elementsIn.map(String.init) ?? "-"
            let outgoing = meter.kind == .sink ? "-" : String(meter.elements)
            rows.append([meter.place, meter.component, incoming, outgoing, String(meter.errors)])
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, text in
                let padding = String(repeating: " ", count: widths[column] - text.count)
                return column >= 2 ? padding + text : text + padding
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    /// `41ms`, `4.12s`, `12.3s`, `2m05s`.
    static func duration(_ seconds: Double) -> String {
        if seconds < 1 { return "\(Int((seconds * 1000).rounded()))ms" }
        if seconds < 10 { return String(format: "%.2fs", seconds) }
        if seconds < 60 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds.rounded())
        return whole < 3600
            ? String(format: "%dm%02ds", whole / 60, whole % 60)
            : String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60)
    }
}

/// The progress line of a run on a terminal: a bar with percent, rate and time left when every
/// source knows its size, else the rate and the totals. Pure: `ProgressLine` draws it.
struct ProgressView {
    var read: Int
    var written: Int
    /// How far the sources are through inputs of known size, if they all know theirs.
    var fraction: (done: Int, total: Int)?
    var elapsed: Double
    /// Elements read a second, lately.
    var rate: Double

    func render(width: Int = 80) -> String {
        let counts = "\(Self.count(read)) read, \(Self.count(written)) written, \(Self.count(Int(rate)))/s"
        guard let fraction, fraction.total > 0 else { return "\(counts), \(RunSummary.duration(elapsed))" }
        let share = Double(fraction.done) / Double(fraction.total)
        let left = share > 0 ? elapsed * (1 - share) / share : nil
        let tail =
            "\(String(format: "%3d", Int(share * 100)))%  \(counts)" + (left.map { ", \(Self.eta($0)) left" } ?? "")
        let barWidth = max(10, min(30, width - tail.count - 4))
        let filled = Int(share * Double(barWidth))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "] "
            + tail
    }

    /// 999, 12.3k, 4.5M.
    static func count(_ value: Int) -> String {
        if value < 1000 { return String(value) }
        if value < 1_000_000 { return String(format: "%.1fk", Double(value) / 1e3) }
        return String(format: "%.1fM", Double(value) / 1e6)
    }

    static func eta(_ seconds: Double) -> String {
        seconds < 1 ? "<1s" : RunSummary.duration(seconds.rounded()).replacingOccurrences(of: ".00", with: "")
    }
}

/// Redraws the progress line on standard error four times a second while a run goes on (a thread
/// of the command, reading the meters' atomics; the pipeline never waits for it).
final class ProgressLine: @unchecked Sendable {
    private let meters: RunMeters
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = ProcessInfo.processInfo.systemUptime

    /// Whether a run shows a progress line: standard error is a terminal, the log is text at
    /// `info` or below, `--quiet` was not given, and no `table`/`status` sink or `prompt` source
    /// draws in place on the same terminal. Lines written to standard output on that terminal go
    /// above the progress line (see `TerminalStatusLine`).
    static func isWanted(quiet: Bool, meters: RunMeters) -> Bool {
        guard !quiet, isatty(2) == 1, RunLog.format == .text, RunLog.shows(.info) else { return false }
        return !sameTerminal(1, 2)
            || !meters.components.contains { ["table", "status", "prompt"].contains($0.component) }
    }

    /// Whether two descriptors are the same terminal (standard output shown where the line is drawn).
    static func sameTerminal(_ first: Int32, _ second: Int32) -> Bool {
        guard isatty(first) == 1, isatty(second) == 1 else { return false }
        var a = stat()
        var b = stat()
        return fstat(first, &a) == 0 && fstat(second, &b) == 0 && a.st_rdev == b.st_rdev
    }

    init(meters: RunMeters) {
        self.meters = meters
        let thread = Thread { [self] in loop() }
        thread.start()
    }

    private func loop() {
        var last = (time: started, read: 0)
        var rate = 0.0
        while !stopped.load(ordering: .relaxed) {
            usleep(250_000)
            if stopped.load(ordering: .relaxed) { break }
            let now = ProcessInfo.processInfo.systemUptime
            let components = meters.components
            let sources = components.filter { $0.kind == .source }
            let read = sources.reduce(0) { $0 + $1.elements }
            let written = components.filter { $0.kind == .sink }.reduce(0) { $0 + $1.written }
            let instant = Double(read - last.read) / max(now - last.time, 0.001)
            rate = rate == 0 ? instant : rate * 0.7 + instant * 0.3
            last = (now, read)
            let fractions = sources.map(\.progress.fraction)
            let fraction: (done: Int, total: Int)? =
                fractions.isEmpty || fractions.contains { $0 == nil }
                ? nil : fractions.reduce((0, 0)) { ($0.0 + $1!.done, $0.1 + $1!.total) }
            let view = ProgressView(
                read: read, written: written, fraction: fraction, elapsed: now - started, rate: rate)
            TerminalStatusLine.shared.draw(view.render(width: Self.columns()))
        }
        finished.signal()
    }

    /// Stops drawing and clears the line, so what follows starts at the left edge.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
        TerminalStatusLine.shared.clear()
    }

    private static func columns() -> Int {
        var size = winsize()
        return ioctl(2, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }
}
