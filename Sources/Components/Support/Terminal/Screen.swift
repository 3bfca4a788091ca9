#if canImport(Glibc)
    import Glibc
#endif

/// The terminal a pipeline draws on: an optional prompt line (from `prompt`) above a body (from
/// `table`), redrawn in place. Off a terminal it is not used: sinks print plain lines instead.
final class Screen {
    /// Whether standard output is a terminal.
    let isTerminal = isatty(1) == 1
    private let output: StandardOutput
    private var promptLine: String?
    private var statusLine: String?
    private var body: [String] = []
    private var drawnLines = 0
    private var cursorHidden = false

    init(output: StandardOutput) {
        self.output = output
        if isTerminal { output.screen = self }
    }

    /// Whether something is drawn that a plain line written to standard output would disturb.
    var isDrawn: Bool { drawnLines > 0 }

    /// Writes `line` (a `stdout` sink's) above the drawing and draws it again below, so the next
    /// redraw, which goes back up over what it drew, does not erase the line.
    func printAbove(_ line: some Collection<UInt8>) {
        var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)F\u{1B}[J" : ""
        text += String(decoding: line, as: UTF8.self) + "\n"
        drawnLines = 0
        output.writeRaw(text)
        redraw()
    }

    /// The terminal's size, or 80x24.
    var size: (columns: Int, rows: Int) {
        var window = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 {
            return (Int(window.ws_col), Int(window.ws_row))
        }
        return (80, 24)
    }

    func setPrompt(_ line: String) {
        promptLine = line
        redraw()
    }

    /// The line under the prompt that shows loading and error state (nil: none).
    func setStatus(_ line: String?) {
        statusLine = line
        redraw()
    }

    func setBody(_ lines: [String]) {
        body = lines
        redraw()
    }

    func appendBody(_ lines: [String]) {
        body += lines
        let limit = max(3, size.rows - 2)
        if body.count > limit { body.removeFirst(body.count - limit) }
        redraw()
    }

    /// Redraws everything: back to where the last drawing started, clear below, draw again.
    private func redraw() {
        var text = ""
        if !cursorHidden {
            text += "\u{1B}[?25l"
            cursorHidden = true
        }
        if drawnLines > 0 { text += "\u{1B}[\(drawnLines)F" }
        text += "\u{1B}[J"
        let lines = (promptLine.map { [$0] } ?? []) + (statusLine.map { [$0] } ?? []) + body
        let width = size.columns
        for line in lines { text += DisplayWidth.truncate(line, to: width) + "\n" }
        drawnLines = lines.count
        output.writeRaw(text)
    }

    /// Leaves the last drawing on screen and shows the cursor again.
    func finish() {
        if cursorHidden {
            output.writeRaw("\u{1B}[?25h")
            cursorHidden = false
        }
        output.flush()
    }
}
