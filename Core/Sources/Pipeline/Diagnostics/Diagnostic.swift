/// A problem found in a pipeline file, with where it is and, when one fits, how to fix it.
@_spi(Host) public struct Diagnostic: Error, Hashable, Sendable, CustomStringConvertible {
    /// How bad it is.
    public enum Severity: String, Sendable {
        /// The file cannot run.
        case error
        /// The file runs, but probably not as meant.
        case warning
    }

    /// How bad it is.
    public var severity: Severity
    /// What is wrong, in one sentence.
    public var message: String
    /// Where.
    public var location: SourceLocation
    /// A hint, printed after the source excerpt (for example the allowed values).
    public var note: String?

    /// An error at `location`.
    public static func error(_ message: String, at location: SourceLocation, note: String? = nil) -> Diagnostic {
        Diagnostic(severity: .error, message: message, location: location, note: note)
    }

    /// A warning at `location`.
    public static func warning(_ message: String, at location: SourceLocation, note: String? = nil) -> Diagnostic {
        Diagnostic(severity: .warning, message: message, location: location, note: note)
    }

    /// `file:line:col: error: message`.
    public var description: String { "\(location): \(severity.rawValue): \(message)" }
}

/// Several diagnostics, thrown when a file has errors.
@_spi(Host) public struct DiagnosticList: Error, Sendable, CustomStringConvertible {
    /// The diagnostics, in file order.
    public var diagnostics: [Diagnostic]

    /// A list of diagnostics.
    public init(_ diagnostics: [Diagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One diagnostic a line.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// Collects diagnostics while a file is checked, so every error is reported, not just the first.
@_spi(Host) public struct DiagnosticCollector: Sendable {
    /// What was found so far.
    public private(set) var diagnostics: [Diagnostic] = []

    /// An empty collector.
    public init() {}

    /// Whether an error was found.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// Records a diagnostic.
    public mutating func add(_ diagnostic: Diagnostic) {
        diagnostics.append(diagnostic)
    }

    /// Records an error.
    public mutating func error(_ message: String, at location: SourceLocation, note: String? = nil) {
        add(.error(message, at: location, note: note))
    }

    /// The diagnostics sorted by location, duplicates removed.
    public var sorted: [Diagnostic] {
        var seen = Set<Diagnostic>()
        return diagnostics.sorted { $0.location < $1.location }.filter { seen.insert($0).inserted }
    }
}

/// Prints diagnostics the way compilers do: the location line, the source line, a caret.
@_spi(Host) public struct DiagnosticRenderer: Sendable {
    /// Whether to use ANSI colours (on a terminal only).
    public var useColor: Bool

    /// A renderer.
    public init(useColor: Bool) {
        self.useColor = useColor
    }

    /// The diagnostics of one file, each with its source line and a caret; past `limit` errors
    /// the rest are counted, not shown. The file is split into lines once, however many there are.
    public func render(_ diagnostics: [Diagnostic], source: String?, limit: Int = 100) -> String {
        let lines = source.map { $0.split(separator: "\n", omittingEmptySubsequences: false) }
        var text = ""
        for diagnostic in diagnostics.prefix(limit) { text += render(diagnostic, lines: lines) }
        if diagnostics.count > limit {
            text += "… and \(diagnostics.count - limit) more; fix these first\n"
        }
        return text
    }

    /// The diagnostic with its source line and a caret under the column.
    public func render(_ diagnostic: Diagnostic, source: String?) -> String {
        render(diagnostic, lines: source.map { $0.split(separator: "\n", omittingEmptySubsequences: false) })
    }

    private func render(_ diagnostic: Diagnostic, lines: [Substring]?) -> String {
        let bold = useColor ? "\u{1B}[1m" : ""
        let reset = useColor ? "\u{1B}[0m" : ""
        let color = useColor ? (diagnostic.severity == .error ? "\u{1B}[1;31m" : "\u{1B}[1;35m") : ""
        let green = useColor ? "\u{1B}[1;32m" : ""
        var text =
            "\(bold)\(diagnostic.location):\(reset) \(color)\(diagnostic.severity.rawValue):\(reset) \(bold)\(diagnostic.message)\(reset)\n"
        if let lines {
            let index = diagnostic.location.line - 1
            if index >= 0 && index < lines.count {
                let line = String(lines[index]).replacingTabs()
                text += line + "\n"
                let caretColumn = max(1, min(diagnostic.location.column, line.unicodeScalars.count + 1))
                text += String(repeating: " ", count: caretColumn - 1) + "\(green)^\(reset)\n"
            }
        }
        if let note = diagnostic.note { text += "note: \(note)\n" }
        return text
    }
}

extension String {
    fileprivate func replacingTabs() -> String {
        String(unicodeScalars.map { $0 == "\t" ? " " : Character($0) })
    }
}

/// Suggestions for misspelt names, by edit distance.
@_spi(Host) public enum Suggestions {
    /// The candidate closest to `name`, if it is close enough to be what was meant.
    public static func closest(to name: String, in candidates: some Sequence<String>) -> String? {
        let lowered = name.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            if best == nil || distance < best!.1 { best = (candidate, distance) }
        }
        guard let (candidate, distance) = best else { return nil }
        let limit = max(2, min(name.count, candidate.count) / 3)
        if distance <= limit { return candidate }
        // A name that starts with a known one (lenght → len) most likely meant it.
        let prefixed = candidates.filter { $0.count >= 3 && lowered.hasPrefix($0.lowercased()) }
        return prefixed.max { $0.count < $1.count }
    }

    /// `; did you mean 'x'?`, or an empty string.
    public static func didYouMean(_ name: String, in candidates: some Sequence<String>) -> String {
        guard let closest = closest(to: name, in: candidates) else { return "" }
        return "; did you mean '\(closest)'?"
    }

    /// The Levenshtein distance between two strings, counting a swap of neighbours as one edit.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var matrix = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { matrix[i][0] = i }
        for j in 0...b.count { matrix[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                matrix[i][j] = Swift.min(matrix[i - 1][j] + 1, matrix[i][j - 1] + 1, matrix[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    matrix[i][j] = Swift.min(matrix[i][j], matrix[i - 2][j - 2] + 1)
                }
            }
        }
        return matrix[a.count][b.count]
    }
}
