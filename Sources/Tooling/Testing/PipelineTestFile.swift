import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// A `*.test.yaml` file: the pipeline it tests and its cases.
@_spi(Host) public struct PipelineTestFile {
    /// One expected or recorded event, at a time on the virtual clock.
    public struct TimedEvent: Equatable {
        /// When, in microseconds.
        public var microseconds: Int64
        /// `next`, `error` (a message the actual error must contain) or `complete`.
        public var kind: Kind
        /// How far, in microseconds, an actual time may be from `microseconds` (`within`).
        public var tolerance: Int64 = 0

        /// What happened.
        public enum Kind: Equatable {
            /// An element.
            case next(Value)
            /// An error whose message contains the text.
            case error(String)
            /// Completion.
            case complete
        }

        /// `780ms next {...}`.
        public var rendered: String {
            let time = PipelineTestFile.format(microseconds: microseconds)
            switch kind {
            case .next(let value): return "\(time) next \(value)"
            case .error(let message): return "\(time) error \(message)"
            case .complete: return "\(time) complete"
            }
        }
    }

    /// A request the pipeline must send (`expectRequests`): when, to which path with which query
    /// parameters (others may be there too, unless `queryExact`), with which body, and whether it
    /// is cancelled before its answer.
    public struct ExpectedRequest {
        /// When it is sent, in microseconds.
        public var microseconds: Int64
        /// Its method (nil: any).
        public var method: String?
        /// Its path.
        public var path: String
        /// Query parameters it must carry.
        public var query: [(String, String)]
        /// Whether `query` is all it carries, each parameter once (`queryExact: true`).
        public var queryExact = false
        /// Its body, as JSON (nil: not checked).
        public var body: Value? = nil
        /// When it is cancelled (nil: it must not be).
        public var cancelled: Int64?
        /// When it is answered (nil: not checked).
        public var answered: Int64?
        /// How far, in microseconds, each actual time may be from the expected one (`within`).
        public var tolerance: Int64 = 0

        /// `300ms GET /users/octocat/repos?per_page=3 cancelled 320ms`.
        public var rendered: String {
            var text =
                "\(PipelineTestFile.format(microseconds: microseconds)) "
                + HTTPRequestLog.describe(method: method ?? "GET", path: path, query: query)
            if queryExact { text += " (exactly)" }
            if let body { text += " body \(body)" }
            if let cancelled { text += " cancelled \(PipelineTestFile.format(microseconds: cancelled))" }
            if let answered { text += " answered \(PipelineTestFile.format(microseconds: answered))" }
            return text
        }
    }

    /// One test.
    public struct Case {
        /// Its name.
        public var name: String
        /// Where it starts in the test file.
        public var location: SourceLocation
        /// Streams whose source is replaced (`source` names the linear form's), with the replacement.
        public var inputs: [(stream: String, node: YAMLNode)]
        /// Canned HTTP responses.
        public var http: [CannedHTTPExchange]
        /// When to stop (nil: when the pipeline ends).
        public var until: RxTimeInterval?
        /// Which sink's input is checked: the one reading this stream (nil: the first sink).
        public var stream: String?
        /// Exact expectation: every event, in order, at its time.
        public var expect: [TimedEvent]?
        /// How many elements.
        public var expectCount: Int?
        /// Elements that must be among those emitted.
        public var expectContains: [Value]?
        /// A marble diagram of what is emitted.
        public var expectMarbles: (marbles: String, tick: RxTimeInterval, values: [String: Value])?
        /// The seed of random() for this test.
        public var seed: UInt64?
        /// When the virtual clock starts, for `now()` (`startAt: 2026-11-25T10:00:00Z`; default the
        /// Unix epoch).
        public var startAt: RxTime = .zero
        /// How far, in microseconds, actual times may be from expected ones unless an entry says
        /// otherwise (`within: 10ms`; jittered retries).
        public var tolerance: Int64 = 0
        /// An expression applied to each element before it is compared (to check part of a big one).
        public var select: Expression? = nil
        /// Where `stream` is written.
        public var streamLocation: SourceLocation? = nil
        /// The `expect` list as written (`rivulet test --update` rewrites it).
        public var expectNode: YAMLNode? = nil
        /// Every HTTP request the run must send, in order (nil: not checked).
        public var expectRequests: [ExpectedRequest]? = nil
    }

    /// The path of the pipeline file (resolved against the test file's directory).
    public var pipeline: String
    /// The cases.
    public var cases: [Case]

    static func format(microseconds: Int64) -> String {
        if microseconds % 1000 == 0 { return "\(microseconds / 1000)ms" }
        return "\(Double(microseconds) / 1000)ms"
    }

    /// Reads a test file; every problem in it is a located diagnostic.
    public static func parse(_ root: YAMLNode?, file: String, baseDirectory: String) -> (
        PipelineTestFile?, [Diagnostic]
    ) {
        var collector = DiagnosticCollector()
        let start = SourceLocation(file: file, line: 1, column: 1)
        guard let root, let pairs = root.pairs else {
            return (nil, [.error("a test file is a mapping with 'pipeline' and 'tests'", at: root?.location ?? start)])
        }
        for pair in pairs where !["pipeline", "tests", "description"].contains(pair.key.scalar ?? "") {
            let key = pair.key.scalar ?? "?"
            collector.error(
                "unknown key '\(key)'\(Suggestions.didYouMean(key, in: ["pipeline", "tests"]))", at: pair.key.location)
        }
        guard let pipeline = root["pipeline"]?.scalar else {
            collector.error("the test file must name its 'pipeline'", at: root.location)
            return (nil, collector.diagnostics)
        }
        var cases: [Case] = []
        for item in root["tests"]?.items ?? [] {
            if let testCase = parseCase(item, baseDirectory: baseDirectory, into: &collector) { cases.append(testCase) }
        }
        if root["tests"]?.items?.isEmpty ?? true { collector.error("the test file has no 'tests'", at: root.location) }
        let file = PipelineTestFile(pipeline: Validator.resolve(pipeline, against: baseDirectory), cases: cases)
        return (collector.hasErrors ? nil : file, collector.diagnostics)
    }

    /// `parse`, keeping what could be read of a file with errors (its pipeline and the cases that
    /// are mappings), so that lint goes on to check the cases against the pipeline and reports
    /// every error at once; nil only when there is no pipeline to check them against.
    public static func parseForChecking(_ root: YAMLNode?, file: String, baseDirectory: String) -> (
        PipelineTestFile?, [Diagnostic]
    ) {
        let (parsed, diagnostics) = parse(root, file: file, baseDirectory: baseDirectory)
        if parsed != nil { return (parsed, diagnostics) }
        guard let pipeline = root?["pipeline"]?.scalar else { return (nil, diagnostics) }
        var ignored = DiagnosticCollector()
        let cases = (root?["tests"]?.items ?? []).compactMap {
            parseCase($0, baseDirectory: baseDirectory, into: &ignored)
        }
        return (
            PipelineTestFile(pipeline: Validator.resolve(pipeline, against: baseDirectory), cases: cases), diagnostics
        )
    }

    static let caseKeys = [
        "name", "inputs", "http", "until", "stream", "expect", "expectCount", "expectContains", "expectMarbles", "seed",
        "select", "expectRequests", "startAt", "within",
    ]

    static func parseCase(_ node: YAMLNode, baseDirectory: String, into collector: inout DiagnosticCollector) -> Case? {
        guard let pairs = node.pairs else {
            collector.error("a test is a mapping with a name, inputs and expectations", at: node.location)
            return nil
        }
        for pair in pairs where !caseKeys.contains(pair.key.scalar ?? "") {
            let key = pair.key.scalar ?? "?"
            collector.error(
                "unknown key '\(key)' in a test\(Suggestions.didYouMean(key, in: caseKeys))", at: pair.key.location)
        }
        var testCase = Case(
            name: node["name"]?.scalar ?? "test at line \(node.location.line)", location: node.location, inputs: [],
            http: [],
            until: nil, stream: node["stream"]?.scalar, expect: nil, expectCount: nil, expectContains: nil,
            expectMarbles: nil,
            seed: node["seed"]?.scalar.flatMap { UInt64($0) })
        testCase.streamLocation = node["stream"]?.location
        for pair in node["inputs"]?.pairs ?? [] {
            testCase.inputs.append((pair.key.scalar ?? "", pair.value))
        }
        parseRunSettings(node, into: &testCase, collector: &collector)
        parseExpectations(node, baseDirectory: baseDirectory, into: &testCase, collector: &collector)
        return testCase
    }

    /// A case's `select`, `startAt`, `within` and `until`.
    private static func parseRunSettings(
        _ node: YAMLNode, into testCase: inout Case, collector: inout DiagnosticCollector
    ) {
        if let select = node["select"] {
            do {
                testCase.select = try Expression(select.scalar ?? "")
            } catch {
                collector.error("select: \(error)", at: select.location)
            }
        }
        if let startAt = node["startAt"] {
            if let epoch = startAt.scalar.flatMap(ExpressionEnvironment.epoch(rfc3339:)) {
                testCase.startAt = epoch
            } else {
                collector.error(
                    "'startAt' must be a time in RFC 3339, such as 2026-11-25T10:00:00Z", at: startAt.location)
            }
        }
        if let within = node["within"] {
            testCase.tolerance = parseTolerance(within, into: &collector) ?? 0
        }
        if let until = node["until"] {
            if let duration = until.scalar.flatMap(DurationSyntax.parse) {
                testCase.until = duration
            } else {
                collector.error("'until' must be a duration such as 5s", at: until.location)
            }
        }
    }

    /// A case's canned `http` answers and its expectations; a case must have one.
    private static func parseExpectations(
        _ node: YAMLNode, baseDirectory: String, into testCase: inout Case, collector: inout DiagnosticCollector
    ) {
        if let expect = node["expect"] {
            testCase.expectNode = expect
            testCase.expect = parseTimeline(expect, tolerance: testCase.tolerance, into: &collector)
        }
        if let count = node["expectCount"] {
            if let text = count.scalar, let value = Int(text) {
                testCase.expectCount = value
            } else {
                collector.error("'expectCount' must be an integer", at: count.location)
            }
        }
        if let contains = node["expectContains"] {
            testCase.expectContains = (contains.items ?? [contains]).map { $0.toValue() }
        }
        if let marbles = node["expectMarbles"] {
            let text = marbles.scalar ?? marbles["marbles"]?.scalar
            let tick = marbles["tick"]?.scalar.flatMap(DurationSyntax.parse) ?? .milliseconds(10)
            var values: [String: Value] = [:]
            for pair in marbles["values"]?.pairs ?? [] { values[pair.key.scalar ?? ""] = pair.value.toValue() }
            if let text {
                testCase.expectMarbles = (text, tick, values)
            } else {
                collector.error("'expectMarbles' is a marble string, or {marbles, tick, values}", at: marbles.location)
            }
        }
        for item in node["http"]?.items ?? [] {
            if let response = parseHTTP(item, baseDirectory: baseDirectory, into: &collector) {
                testCase.http.append(response)
            }
        }
        if let requests = node["expectRequests"] {
            testCase.expectRequests = parseRequests(requests, tolerance: testCase.tolerance, into: &collector)
        }
        if testCase.expect == nil && testCase.expectCount == nil && testCase.expectContains == nil
            && testCase.expectMarbles == nil && testCase.expectRequests == nil
        {
            collector.error(
                "test '\(testCase.name)' has no expectation (expect, expectCount, expectContains, expectMarbles or expectRequests)",
                at: node.location)
        }
    }

    /// `within: 10ms`: a tolerance in microseconds.
    static func parseTolerance(_ node: YAMLNode, into collector: inout DiagnosticCollector) -> Int64? {
        guard let duration = node.scalar.flatMap(DurationSyntax.parse), duration >= .zero else {
            collector.error("'within' must be a duration such as 10ms", at: node.location)
            return nil
        }
        return duration.totalNanoseconds / 1000
    }

    static func parseTimeline(_ node: YAMLNode, tolerance: Int64 = 0, into collector: inout DiagnosticCollector)
        -> [TimedEvent]
    {
        var events: [TimedEvent] = []
        for item in node.items ?? [] {
            guard let at = item["at"]?.scalar, let duration = DurationSyntax.parse(at) else {
                collector.error("an expected event needs 'at', a time such as 780ms", at: item.location)
                continue
            }
            let microseconds = duration.totalNanoseconds / 1000
            let kind: TimedEvent.Kind
            if let next = item["next"] {
                kind = .next(next.toValue())
            } else if let error = item["error"] {
                kind = .error(error.scalar ?? "")
            } else if item["complete"] != nil {
                kind = .complete
            } else {
                let other = item.pairs?.compactMap(\.key.scalar).first { $0 != "at" }
                let guess = other.map { Suggestions.didYouMean($0, in: ["next", "error", "complete"]) } ?? ""
                collector.error("an expected event needs next, error or complete\(guess)", at: item.location)
                continue
            }
            var event = TimedEvent(microseconds: microseconds, kind: kind)
            event.tolerance = item["within"].map { parseTolerance($0, into: &collector) ?? 0 } ?? tolerance
            events.append(event)
        }
        return events
    }

    static let requestKeys = [
        "at", "method", "path", "query", "queryExact", "body", "cancelled", "answered", "within",
    ]

    static func parseRequests(_ node: YAMLNode, tolerance: Int64 = 0, into collector: inout DiagnosticCollector)
        -> [ExpectedRequest]
    {
        guard let items = node.items else {
            collector.error("'expectRequests' is a list of {at, path, query, cancelled}", at: node.location)
            return []
        }
        func time(_ key: String, of item: YAMLNode) -> Int64? {
            guard let value = item[key] else { return nil }
            guard let duration = value.scalar.flatMap(DurationSyntax.parse) else {
                collector.error("'\(key)' must be a time such as 320ms", at: value.location)
                return nil
            }
            return duration.totalNanoseconds / 1000
        }
        var requests: [ExpectedRequest] = []
        for item in items {
            for pair in item.pairs ?? [] where !requestKeys.contains(pair.key.scalar ?? "") {
                let key = pair.key.scalar ?? "?"
                collector.error(
                    "unknown key '\(key)' in an expected request\(Suggestions.didYouMean(key, in: requestKeys))",
                    at: pair.key.location)
            }
            guard item["at"] != nil, var path = item["path"]?.scalar else {
                collector.error("an expected request needs 'at' (when it is sent) and 'path'", at: item.location)
                continue
            }
            guard let at = time("at", of: item) else { continue }
            var query: [(String, String)] = []
            if let mark = path.firstIndex(of: "?") {
                for part in path[path.index(after: mark)...].split(separator: "&") {
                    let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
                    query.append((pieces[0], pieces.count > 1 ? pieces[1] : ""))
                }
                path = String(path[..<mark])
            }
            for pair in item["query"]?.pairs ?? [] {
                query.append((pair.key.scalar ?? "", pair.value.scalar ?? pair.value.toValue().description))
            }
            var request = ExpectedRequest(
                microseconds: at, method: item["method"]?.scalar?.uppercased(), path: path, query: query,
                cancelled: time("cancelled", of: item), answered: time("answered", of: item))
            if let exact = item["queryExact"] {
                guard let flag = exact.toValue().boolValue else {
                    collector.error("'queryExact' is true or false", at: exact.location)
                    continue
                }
                request.queryExact = flag
            }
            request.body = item["body"]?.toValue()
            request.tolerance = item["within"].map { parseTolerance($0, into: &collector) ?? 0 } ?? tolerance
            requests.append(request)
        }
        return requests
    }

    static func parseHTTP(_ node: YAMLNode, baseDirectory: String, into collector: inout DiagnosticCollector)
        -> CannedHTTPExchange?
    {
        guard let request = node["request"], let response = node["response"] else {
            collector.error("an http entry has a 'request' and a 'response'", at: node.location)
            return nil
        }
        var query: [String: String] = [:]
        for pair in request["query"]?.pairs ?? [] {
            query[pair.key.scalar ?? ""] = pair.value.scalar ?? pair.value.toValue().description
        }
        var headers: [String: String] = [:]
        for pair in response["headers"]?.pairs ?? [] { headers[pair.key.scalar ?? ""] = pair.value.scalar ?? "" }
        var body: [UInt8] = []
        if let file = response["bodyFile"]?.scalar {
            let path = Validator.resolve(file, against: baseDirectory)
            guard let text = LocalFiles.readText(path) else {
                collector.error(
                    "cannot read bodyFile '\(file)' (looked for \(path))", at: response["bodyFile"]!.location)
                return nil
            }
            body = Array(text.utf8)
        } else if let inline = response["body"] {
            body = Array((inline.scalar ?? inline.toValue().description).utf8)
        }
        let delay = response["delay"]?.scalar.flatMap(DurationSyntax.parse) ?? .zero
        return CannedHTTPExchange(
            method: request["method"]?.scalar, path: request["path"]?.scalar ?? "/", query: query,
            status: Int(response["status"]?.scalar ?? "200") ?? 200, headers: headers, body: body, delay: delay)
    }
}
