import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The progress line `rivulet run` draws at the foot of the terminal on standard error, and
/// everything else written to that terminal: a write there first clears the line, under one lock,
/// so an element's line never lands inside the progress text, and draws it again below.
public final class TerminalStatusLine: Sendable {
    /// The process's one status line.
    public static let shared = TerminalStatusLine()
    /// The line drawn, if one is.
    private let drawn = Mutex<[UInt8]?>(nil)

    /// Draws `text` as the status line, over the one drawn before.
    public func draw(_ text: String) {
        drawn.withLock { drawn in
            drawn = Array(("\r" + text + "\u{1B}[K").utf8)
            Self.writeAll(drawn!)
        }
    }

    /// Clears the line for good, so what follows starts at the left edge.
    public func clear() {
        drawn.withLock { drawn in
            if drawn != nil { Self.writeAll(Array("\r\u{1B}[K".utf8)) }
            drawn = nil
        }
    }

    /// Runs `write`, a write of whole lines to the terminal the line is drawn on, with the line
    /// cleared first and drawn again after.
    public func writing(_ write: () -> Void) {
        drawn.withLock { drawn in
            if drawn != nil { Self.writeAll(Array("\r\u{1B}[K".utf8)) }
            write()
            if let drawn { Self.writeAll(drawn) }
        }
    }

    private static func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
