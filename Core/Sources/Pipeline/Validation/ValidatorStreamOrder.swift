/// The order streams are built in, and the loops between them.
extension Validator {
    /// The streams in dependency order; a cycle is an error naming it.
    mutating func orderStreams(_ streams: [ValidatedStream], spec: PipelineSpec) -> [ValidatedStream] {
        let byName = Dictionary(streams.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var ordered: [ValidatedStream] = []
        var state: [String: Int] = [:]
        var reported = false
        // `reference` is where the stream being visited is named by the one before it in `path`.
        func visit(_ name: String, path: [String], reference: SourceLocation?) {
            guard let stream = byName[name] else { return }
            if state[name] == 2 { return }
            if state[name] == 1 {
                if !reported {
                    reported = true
                    let cycle = path.drop { $0 != name } + [name]
                    // At the reference that closes the cycle, where the fix usually is.
                    diagnostics.error(
                        "streams form a cycle: \(cycle.joined(separator: " → "))",
                        at: reference ?? stream.location)
                }
                return
            }
            state[name] = 1
            // A side stream's subject exists before any stream is built: no need to build its owner first.
            for dependency in stream.dependencies where !dependency.isSideStream {
                visit(dependency.name, path: path + [name], reference: dependency.location)
            }
            state[name] = 2
            ordered.append(stream)
        }
        for stream in streams { visit(stream.name, path: [], reference: nil) }
        if !reported { checkFeedbackLoops(streams, byName: byName) }
        return ordered
    }

    /// A stream may read a side stream of an operator downstream of it (a page counter fed by an
    /// action's elements), but such a loop must be closed by a read that only samples
    /// (`withLatestFrom`'s stream): otherwise what an operator reports feeds it again at once,
    /// without end (an action refusing its own errors would recurse until the stack is gone).
    mutating func checkFeedbackLoops(_ streams: [ValidatedStream], byName: [String: ValidatedStream]) {
        var state: [String: Int] = [:]
        func visit(_ name: String, path: [(String, ValidatedStream.Dependency?)]) -> Bool {
            guard let stream = byName[name] else { return false }
            if state[name] == 2 { return false }
            if state[name] == 1 {
                let loop = Array(path.drop { $0.0 != name })
                // `a → x.errors → a`: each stream, and the side stream through which it reads the next.
                let names =
                    loop.flatMap { step -> [String] in
                        guard let edge = step.1, edge.isSideStream else { return [step.0] }
                        return [step.0, edge.reference]
                    } + [name]
                let closing = loop.compactMap(\.1).last { $0.isSideStream } ?? loop.compactMap(\.1).last
                diagnostics.error(
                    "streams feed themselves without end: \(names.joined(separator: " → ")); close the loop with withLatestFrom, which reads the latest element without emitting",
                    at: closing?.location ?? stream.location,
                    note:
                        "a stream may read a side stream of an operator downstream of it only through a read that samples (withLatestFrom's stream)"
                )
                return true
            }
            state[name] = 1
            for dependency in stream.dependencies where !dependency.isSampled {
                if visit(dependency.name, path: path + [(name, dependency)]) { return true }
            }
            state[name] = 2
            return false
        }
        for stream in streams where visit(stream.name, path: []) { return }
    }
}
