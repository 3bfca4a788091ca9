import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// How a case's expectations are compared with what its run produced: events (times included),
/// requests sent, and the diff and marbles shown when they differ.
extension PipelineTestRunner {
    static func matches(_ expected: [PipelineTestFile.ExpectedRequest], _ sent: [HTTPRequestLog.Entry]) -> Bool {
        guard expected.count == sent.count else { return false }
        return zip(expected, sent).allSatisfy { wanted, request in
            func micro(_ time: RxTime) -> Int64 { time.totalNanoseconds / 1000 }
            func near(_ expected: Int64, _ time: RxTime) -> Bool { abs(expected - micro(time)) <= wanted.tolerance }
            guard near(wanted.microseconds, request.sent), wanted.path == request.path else { return false }
            if let method = wanted.method, method != request.method { return false }
            guard wanted.query.allSatisfy({ pair in request.query.contains { $0 == pair } }) else { return false }
            if wanted.queryExact && wanted.query.count != request.query.count { return false }
            if let body = wanted.body, !Self.same(body, request.body ?? []) { return false }
            switch request.outcome {
            case .cancelled(let time):
                return wanted.cancelled.map { near($0, time) } ?? false
            case .answered(let time, _):
                return wanted.cancelled == nil && (wanted.answered.map { near($0, time) } ?? true)
            case .pending:
                return wanted.cancelled == nil && wanted.answered == nil
            }
        }
    }

    /// Whether a request's `body` is `expected`: the same JSON value, or for a body that is not
    /// JSON, the same text.
    static func same(_ expected: Value, _ body: [UInt8]) -> Bool {
        if let parsed = try? JSONParser.parse(body) { return expected.isEqualInExpressions(to: parsed) }
        return expected == .string(String(decoding: body, as: UTF8.self))
    }

    /// `300ms GET /path?a=1 answered 350ms (200)`.
    static func render(_ request: HTTPRequestLog.Entry) -> String {
        func format(_ time: RxTime) -> String { PipelineTestFile.format(microseconds: time.totalNanoseconds / 1000) }
        var text = "\(format(request.sent)) \(request.line)"
        if let body = request.body, !body.isEmpty {
            text += " body \(String(decoding: body.prefix(200), as: UTF8.self))"
        }
        switch request.outcome {
        case .pending: text += " (no answer yet)"
        case .cancelled(let time): text += " cancelled \(format(time))"
        case .answered(let time, let status):
            text += " answered \(format(time))" + (status.map { " (\($0))" } ?? " (no canned answer)")
        }
        return text
    }

    func matches(_ expected: [PipelineTestFile.TimedEvent], _ actual: [PipelineTestFile.TimedEvent]) -> Bool {
        guard expected.count == actual.count else { return false }
        return zip(expected, actual).allSatisfy(Self.same)
    }

    static func same(_ expected: PipelineTestFile.TimedEvent, _ actual: PipelineTestFile.TimedEvent) -> Bool {
        guard abs(expected.microseconds - actual.microseconds) <= expected.tolerance else { return false }
        switch (expected.kind, actual.kind) {
        case (.error(let wanted), .error(let got)): return got.contains(wanted)
        case (.next(let a), .next(let b)): return a.isEqualInExpressions(to: b)
        default: return expected.kind == actual.kind
        }
    }

    /// A line diff (longest common subsequence) of expected and actual events.
    func diff(_ expected: [PipelineTestFile.TimedEvent], _ actual: [PipelineTestFile.TimedEvent]) -> String {
        let n = expected.count
        let m = actual.count
        var table = Array(repeating: Array(repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                table[i][j] =
                    Self.same(expected[i], actual[j]) ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var lines: [String] = []
        var i = 0
        var j = 0
        while i < n || j < m {
            if i < n && j < m && Self.same(expected[i], actual[j]) {
                lines.append("    \(actual[j].rendered)")
                i += 1
                j += 1
            } else if j < m && (i == n || table[i][j + 1] > table[i + 1][j]) {
                lines.append("  + \(actual[j].rendered)")
                j += 1
            } else {
                lines.append("  - \(expected[i].rendered)")
                i += 1
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The events as marbles: one character per tick, `( )` for several in one tick.
    static func marbles(_ events: [PipelineTestFile.TimedEvent], tick: RxTimeInterval, values: [String: Value])
        -> String
    {
        let tickMicroseconds = max(1, tick.totalNanoseconds / 1000)
        var slots: [Int64: [String]] = [:]
        for event in events {
            let slot = event.microseconds / tickMicroseconds
            let mark: String
            switch event.kind {
            case .next(let value):
                if event.microseconds % tickMicroseconds != 0 {
                    mark = "?"
                } else if let letter = values.first(where: { $0.value.isEqualInExpressions(to: value) })?.key {
                    mark = letter
                } else if case .string(let text) = value, text.count == 1 {
                    mark = text
                } else {
                    mark = "?"
                }
            case .error: mark = "#"
            case .complete: mark = "|"
            }
            slots[slot, default: []].append(mark)
        }
        guard let last = slots.keys.max() else { return "" }
        var text = ""
        var slot: Int64 = 0
        while slot <= last {
            if let marks = slots[slot] {
                text += marks.count == 1 ? marks[0] : "(" + marks.joined() + ")"
                slot += marks.count == 1 ? 1 : Int64(marks.count + 2)
            } else {
                text += "-"
                slot += 1
            }
        }
        return text
    }
}
