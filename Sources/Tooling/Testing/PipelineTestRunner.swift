@_spi(Host) import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import PipelineHost
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive

/// Runs the cases of `*.test.yaml` files on a virtual clock and checks their expectations.
@_spi(Host) public struct PipelineTestRunner {
    /// The outcome of one case.
    public struct CaseResult {
        /// The case's name.
        public let name: String
        /// Whether every expectation held.
        public let passed: Bool
        /// Why not: the diff of expected and actual events, or the error.
        public let report: String
        /// What the checked stream carried (after `select`), when the case ran.
        public var actual: [PipelineTestFile.TimedEvent] = []
        /// The case as written.
        public var testCase: PipelineTestFile.Case? = nil
    }

    /// The outcome of one test file.
    public struct FileResult {
        /// The test file.
        public let path: String
        /// One result per case (empty when the file is invalid).
        public let cases: [CaseResult]
        /// Problems with the test file or its pipeline; any error makes the file invalid.
        public let diagnostics: [Diagnostic]
        /// The text of the file the diagnostics are in.
        public let diagnosticSource: String?
    }

    let registry: ComponentRegistry
    let environment: [String: String]
    let loadPlugin: ((String, ComponentRegistry) -> String?)?

    /// A runner over `registry`; plugins named in pipelines are loaded with `loadPlugin`.
    public init(
        registry: ComponentRegistry, environment: [String: String],
        loadPlugin: ((String, ComponentRegistry) -> String?)? = nil
    ) {
        self.registry = registry
        self.environment = environment
        self.loadPlugin = loadPlugin
    }

    /// What a test records of a sink: every event, stamped in microseconds of the virtual clock.
    typealias Recorder = RecordingSink

    /// A recorded event as test files write it (an error by its message).
    static func timed(_ recorded: (time: Int, event: Event<Value>)) -> PipelineTestFile.TimedEvent {
        let microseconds = Int64(recorded.time)
        switch recorded.event {
        case .next(let value): return .init(microseconds: microseconds, kind: .next(value))
        case .error(let error): return .init(microseconds: microseconds, kind: .error("\(error)"))
        case .completed: return .init(microseconds: microseconds, kind: .complete)
        }
    }

    /// A sink that runs (its requests answered from the test's `http:`) and is recorded.
    final class RecordingTee: AsynchronousSink {
        let recorder: Recorder
        let sink: any PipelineSink

        init(recorder: Recorder, sink: any PipelineSink) {
            self.recorder = recorder
            self.sink = sink
        }

        func receive(_ event: Event<Value>) throws {
            recorder.receive(event)
            try sink.receive(event)
        }

        func close() throws { try sink.close() }

        func start(failing fail: @escaping (any Error) -> Void) {
            (sink as? any AsynchronousSink)?.start(failing: fail)
        }

        func whenFinished(_ done: @escaping () -> Void) {
            guard let sink = sink as? any AsynchronousSink else { return done() }
            sink.whenFinished(done)
        }
    }

    /// Runs the cases of the test file at `path` whose name contains `filter` (all without one).
    public func run(testFile path: String, filter: String? = nil) -> FileResult {
        visit(testFile: path, execute: true, filter: filter)
    }

    /// Checks the test file at `path` without running it (`rivulet lint`): the file itself, its
    /// pipeline, and each case's pipeline with its inputs in place and the stream it checks; every
    /// problem is a located diagnostic.
    public func check(testFile path: String) -> FileResult {
        visit(testFile: path, execute: false)
    }

    private func visit(testFile path: String, execute: Bool, filter: String? = nil) -> FileResult {
        let opened: OpenedTestFile
        switch open(testFile: path, execute: execute) {
        case .opened(let file): opened = file
        case .unvisitable(let result): return result
        }
        let (text, testFile, diagnostics, pipeline) = (
            opened.text, opened.testFile, opened.diagnostics, opened.pipeline
        )
        var results: [CaseResult] = []
        var caseProblems: [Diagnostic] = []
        for testCase in testFile.cases where filter.map({ testCase.name.contains($0) }) ?? true {
            let (result, problems) = visit(testCase, of: pipeline, in: path, text: text, execute: execute)
            results.append(result)
            caseProblems += problems.filter { !caseProblems.contains($0) }
        }
        if !execute {
            return FileResult(
                path: path, cases: results,
                diagnostics: diagnostics + caseProblems.filter { !diagnostics.contains($0) },
                diagnosticSource: text)
        }
        return FileResult(path: path, cases: results, diagnostics: diagnostics, diagnosticSource: text)
    }

    /// A test file's pipeline as written: its path, text and YAML.
    private struct PipelineUnderTest {
        let path: String
        let text: String
        let root: YAMLNode?
        var isGraph: Bool { root?["streams"] != nil }
        var streamNames: [String] { root?["streams"]?.pairs?.compactMap(\.key.scalar) ?? [] }
    }

    /// A test file read and parsed, with its pipeline read and checked as written.
    private struct OpenedTestFile {
        let text: String
        let testFile: PipelineTestFile
        let diagnostics: [Diagnostic]
        let pipeline: PipelineUnderTest
    }

    /// A test file opened, or the result saying why it has no cases to visit. (Not a `Result`:
    /// its failure would have to be a `Sendable` error, and a file's result need not be.)
    private enum Opening {
        case opened(OpenedTestFile)
        case unvisitable(FileResult)
    }

    /// Reads and parses the test file at `path` and the pipeline it names; the pipeline as written
    /// is checked first, so a test reports exactly what lint and run do.
    private func open(testFile path: String, execute: Bool) -> Opening {
        func unvisitable(_ diagnostics: [Diagnostic], source: String?) -> Opening {
            .unvisitable(FileResult(path: path, cases: [], diagnostics: diagnostics, diagnosticSource: source))
        }
        let directory = LocalFiles.directory(of: path)
        let text: String
        switch PipelineLoader.readPipelineFile(path) {
        case .success(let read): text = read
        case .failure(let problem): return unvisitable([problem], source: nil)
        }
        let root: YAMLNode?
        do {
            root = try YAMLLoader(file: path, environment: environment).load(text)
        } catch {
            return unvisitable(error.diagnostics, source: text)
        }
        let (parsed, diagnostics) =
            execute
            ? PipelineTestFile.parse(root, file: path, baseDirectory: directory)
            : PipelineTestFile.parseForChecking(root, file: path, baseDirectory: directory)
        guard let testFile = parsed else { return unvisitable(diagnostics, source: text) }
        let pipelineText: String
        switch PipelineLoader.readPipelineFile(testFile.pipeline) {
        case .success(let read): pipelineText = read
        case .failure(let problem) where problem.location.line == 1 && problem.location.column == 1:
            // The pipeline cannot be read at all: say so at the test file's `pipeline:` key.
            let location = root?["pipeline"]?.location ?? SourceLocation(file: path, line: 1, column: 1)
            return unvisitable(
                [.error("cannot read the pipeline '\(testFile.pipeline)': \(problem.message)", at: location)],
                source: text)
        case .failure(let problem): return unvisitable([problem], source: nil)
        }
        let asWritten = PipelineLoader(
            registry: registry, environment: environment,
            loadPlugin: loadPlugin.map { load in { load($0, registry) } }
        ).load(text: pipelineText, path: testFile.pipeline)
        let pipeline = PipelineUnderTest(
            path: testFile.pipeline, text: pipelineText,
            root: (try? YAMLLoader(file: testFile.pipeline, environment: environment).load(pipelineText)) ?? nil)
        if asWritten.pipeline == nil
            && !loadsWithoutReplacedSources(
                pipelineText, path: testFile.pipeline, cases: testFile.cases, isGraph: pipeline.isGraph)
        {
            return unvisitable(diagnostics + asWritten.diagnostics, source: pipelineText)
        }
        return .opened(OpenedTestFile(text: text, testFile: testFile, diagnostics: diagnostics, pipeline: pipeline))
    }

    /// One case of the test file at `path` (text `text`): the pipeline loaded with what the case
    /// replaces, and run when `execute`; with the problems of the case to report in the file.
    private func visit(
        _ testCase: PipelineTestFile.Case, of pipeline: PipelineUnderTest, in path: String, text: String,
        execute: Bool
    ) -> (result: CaseResult, problems: [Diagnostic]) {
        let (overrides, inputProblems) = overrides(for: testCase, of: pipeline)
        if !inputProblems.isEmpty {
            let report = inputProblems.map { DiagnosticRenderer(useColor: false).render($0, source: text) }.joined()
            return (CaseResult(name: testCase.name, passed: false, report: report), inputProblems)
        }
        let scheduler = VirtualTimeScheduler(resolution: .microseconds(1))
        var recorders: [(stream: String, recorder: Recorder)] = []
        let recording = recordingRegistry(scheduler: scheduler) { recorders.append(($0, $1)) }
        let loadPlugin = self.loadPlugin
        let loaded = PipelineLoader(
            registry: recording, environment: environment,
            loadPlugin: loadPlugin.map { load in { load($0, recording) } }
        ).load(text: pipeline.text, path: pipeline.path, overrides: overrides)
        guard let built = loaded.pipeline else {
            // A problem with what the case adds (its `stream`) is located in the test file.
            let rendered = loaded.diagnostics.map {
                DiagnosticRenderer(useColor: false).render($0, source: $0.location.file == path ? text : loaded.source)
            }.joined()
            return (CaseResult(name: testCase.name, passed: false, report: rendered), loaded.diagnostics)
        }
        guard execute else { return (CaseResult(name: testCase.name, passed: true, report: ""), []) }
        let result = run(
            testCase, pipeline: built, scheduler: scheduler, recorders: { recorders },
            baseDirectory: loaded.baseDirectory)
        return (result, [])
    }

    /// What a case replaces in its pipeline: the sink on the stream it checks, and the source of
    /// each stream it gives an input; or why an input names no stream.
    private func overrides(for testCase: PipelineTestFile.Case, of pipeline: PipelineUnderTest) -> (
        [Override], [Diagnostic]
    ) {
        var overrides: [Override] = []
        if let stream = testCase.stream, let root = pipeline.root,
            let withSink = Self.addingSink(for: stream, to: root, at: testCase.streamLocation ?? testCase.location)
        {
            overrides.append(Override(path: [], node: withSink))
        }
        var problems: [Diagnostic] = []
        let streamNames = pipeline.streamNames
        for (stream, node) in testCase.inputs {
            if !pipeline.isGraph && stream != "source" && stream != PipelineSpec.linearStreamName {
                problems.append(.error("the pipeline has one stream; name its input 'source'", at: node.location))
            } else if pipeline.isGraph && !streamNames.contains(stream) {
                problems.append(
                    .error(
                        "the pipeline has no stream '\(stream)' to give an input"
                            + Suggestions.didYouMean(stream, in: streamNames),
                        at: node.location, note: "its streams: " + streamNames.joined(separator: ", ")))
            } else {
                let path = pipeline.isGraph ? ["streams", stream, "source"] : ["source"]
                overrides.append(Override(path: path, node: sourceNode(for: node)))
            }
        }
        return (overrides, problems)
    }

    /// Whether the pipeline loads once the sources every case replaces are left out: a source
    /// no case runs (its input folder missing, say) does not make the test file invalid.
    private func loadsWithoutReplacedSources(
        _ pipelineText: String, path: String, cases: [PipelineTestFile.Case], isGraph: Bool
    ) -> Bool {
        guard let first = cases.first else { return false }
        var replaced = Set(first.inputs.map(\.stream))
        for testCase in cases.dropFirst() { replaced.formIntersection(testCase.inputs.map(\.stream)) }
        guard !replaced.isEmpty,
            let empty = (try? YAMLLoader(file: path, environment: environment).load("{ events: [] }")) ?? nil
        else { return false }
        let overrides = replaced.map { stream in
            Override(path: isGraph ? ["streams", stream, "source"] : ["source"], node: empty)
        }
        return PipelineLoader(
            registry: registry, environment: environment,
            loadPlugin: loadPlugin.map { load in { load($0, registry) } }
        ).load(text: pipelineText, path: path, overrides: overrides).pipeline != nil
    }

    /// The pipeline's root with a sink reading `stream` added, when no sink reads it, so a case can
    /// check a stream that nothing writes out (a side stream such as `lookup.errors`); nil when a
    /// sink reads it already. Under test every sink records, so which sink it is does not matter.
    static func addingSink(for stream: String, to root: YAMLNode, at location: SourceLocation) -> YAMLNode? {
        guard let pairs = root.pairs else { return nil }
        func scalar(_ text: String) -> YAMLNode { YAMLNode(kind: .scalar(text, .plain), location: location) }
        let added = YAMLNode(
            kind: .mapping([
                YAMLPair(key: scalar("stream"), value: scalar(stream)),
                YAMLPair(key: scalar("stdout"), value: YAMLNode(kind: .mapping([]), location: location)),
            ]),
            location: location)
        var items: [YAMLNode]
        var kept = pairs
        if let sinks = root["sinks"]?.items {
            let read = sinks.map { $0["stream"]?.scalar ?? PipelineSpec.linearStreamName }
            if read.contains(stream) { return nil }
            items = sinks
            kept.removeAll { $0.key.scalar == "sinks" }
        } else if let sink = root["sink"] {
            if stream == PipelineSpec.linearStreamName { return nil }
            items = [sink]
            kept.removeAll { $0.key.scalar == "sink" }
        } else {
            return nil
        }
        items.append(added)
        kept.append(YAMLPair(key: scalar("sinks"), value: YAMLNode(kind: .sequence(items), location: location)))
        return YAMLNode(kind: .mapping(kept), location: root.location)
    }

    /// A test input as a source: a list is a timeline, a mapping of events' parameters is one too,
    /// anything else (a mapping naming a source) stands as written.
    func sourceNode(for node: YAMLNode) -> YAMLNode {
        let eventsKeys: Set<String> = ["events", "marbles", "tick", "values", "timeline", "hot"]
        let key = YAMLNode(kind: .scalar("events", .plain), location: node.location)
        if node.items != nil {
            return YAMLNode(kind: .mapping([YAMLPair(key: key, value: node)]), location: node.location)
        }
        if let pairs = node.pairs, pairs.allSatisfy({ eventsKeys.contains($0.key.scalar ?? "") }), node["events"] == nil
        {
            return YAMLNode(kind: .mapping([YAMLPair(key: key, value: node)]), location: node.location)
        }
        return node
    }

    /// The registry with every sink recording instead of writing (an `http` sink does both).
    func recordingRegistry(scheduler: VirtualTimeScheduler, register: @escaping (String, Recorder) -> Void)
        -> ComponentRegistry
    {
        let copy = ComponentRegistry()
        copy.loadedPlugins = registry.loadedPlugins
        for var spec in registry.all {
            if spec.kind == .sink {
                let real = spec.traits.runsUnderTests ? spec.factory : nil
                spec.factory = .sink { parameters, context in
                    let recorder = Recorder(time: { Int(scheduler.now.totalNanoseconds / 1000) })
                    register(context.streamName ?? "", recorder)
                    guard case .sink(let make)? = real else { return recorder }
                    return RecordingTee(recorder: recorder, sink: try make(parameters, context))
                }
            }
            try? copy.register(spec, origin: registry.origin(of: spec.name, kind: spec.kind) ?? "rivulet")
        }
        return copy
    }

    func run(
        _ testCase: PipelineTestFile.Case, pipeline: ValidatedPipeline, scheduler: VirtualTimeScheduler,
        recorders: () -> [(stream: String, recorder: Recorder)], baseDirectory: String
    ) -> CaseResult {
        let seed = testCase.seed ?? pipeline.spec.seed ?? 1
        var logged: [String] = []
        var setup = PipelineHost.Setup()
        setup.baseDirectory = baseDirectory
        setup.seed = seed
        setup.epoch = testCase.startAt
        setup.log = { logged.append($0.message) }
        let session = HTTPSession(mode: .canned(testCase.http))
        // The plan `rivulet run` compiles, split by key where it splits (one thread on this clock).
        setup.services = [session, BuiltinComponents.keyedSplitter]
        let host: PipelineHost
        do {
            host = try PipelineHost(pipeline, on: scheduler, setup)
        } catch {
            return CaseResult(name: testCase.name, passed: false, report: "\(error)")
        }
        let environment = host.environment
        host.start()
        let steps = host.runToEnd(on: scheduler, until: testCase.until, maxSteps: 10_000_000)
        let failure: (any Error)? = if case .failed(let error)? = host.outcome { error } else { nil }
        let chosen: Recorder?
        if let stream = testCase.stream {
            chosen = recorders().first { $0.stream == stream }?.recorder
            if chosen == nil {
                return CaseResult(name: testCase.name, passed: false, report: "no sink reads stream '\(stream)'")
            }
        } else {
            chosen = recorders().first?.recorder
        }
        var problems: [String] = []
        let actual = Self.selected((chosen?.events ?? []).map(Self.timed), by: testCase.select, in: environment) {
            problems.append($0)
        }
        // A sink's failure (an http sink's request the test does not answer) reaches no stream.
        if let failure, !actual.contains(where: { if case .error = $0.kind { true } else { false } }) {
            problems.append("the run failed: \(failure)")
        }
        if steps >= 10_000_000 {
            problems.append("the pipeline did not end within 10,000,000 steps; give the test an 'until'")
        }
        problems += unmetExpectations(of: testCase, actual: actual, requests: session.requests.entries)
        return CaseResult(
            name: testCase.name, passed: problems.isEmpty, report: problems.joined(separator: "\n"), actual: actual,
            testCase: testCase)
    }

    /// The recorded events with `select` applied to each element (a failure to apply it said
    /// through `problem`, the element left as it was).
    private static func selected(
        _ events: [PipelineTestFile.TimedEvent], by select: Expression?, in environment: ExpressionEnvironment,
        problem: (String) -> Void
    ) -> [PipelineTestFile.TimedEvent] {
        guard let select else { return events }
        let scope = EvaluationScope(environment: environment)
        return events.map { event in
            guard case .next(let value) = event.kind else { return event }
            var selected = event
            do {
                selected.kind = .next(try select.evaluate(value, in: scope))
            } catch {
                problem("select '\(select.source)' on \(value): \(error)")
            }
            return selected
        }
    }

    /// What of the case's `expect…` the events and the requests sent do not meet, said each.
    private func unmetExpectations(
        of testCase: PipelineTestFile.Case, actual: [PipelineTestFile.TimedEvent], requests sent: [HTTPRequestLog.Entry]
    ) -> [String] {
        var problems: [String] = []
        if let expected = testCase.expect, !matches(expected, actual) {
            problems.append("events differ (- expected, + actual):\n" + diff(expected, actual))
        }
        let elements = actual.compactMap { event -> Value? in
            if case .next(let value) = event.kind { return value }
            return nil
        }
        if let count = testCase.expectCount, count != elements.count {
            let shown = actual.prefix(20).map { "    " + $0.rendered }.joined(separator: "\n")
            problems.append(
                "expected \(count) elements, got \(elements.count)\n" + shown
                    + (actual.count > 20 ? "\n    … \(actual.count - 20) more" : ""))
        }
        for value in testCase.expectContains ?? [] where !elements.contains(value) {
            problems.append("expected an element \(value), none was emitted")
        }
        if let expected = testCase.expectRequests, !Self.matches(expected, sent) {
            problems.append(
                "requests differ:\n  expected:\n"
                    + expected.map { "    " + $0.rendered }.joined(separator: "\n")
                    + "\n  sent:\n" + sent.map { "    " + Self.render($0) }.joined(separator: "\n"))
        }
        if let (marbles, tick, values) = testCase.expectMarbles {
            let rendered = Self.marbles(actual, tick: tick, values: values)
            let wanted = marbles.filter { $0 != " " }
            if rendered != wanted { problems.append("marbles differ:\n  expected \(wanted)\n  actual   \(rendered)") }
        }
        return problems
    }
}
