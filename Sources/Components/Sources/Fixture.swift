@_spi(Components) import Pipeline
@_spi(Components) import Reactive
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

private enum FixtureFormat: String, ParameterChoice {
    case auto, json, jsonl, yaml, csv
}
private enum Key {
    static let path = Parameter<String>(
        "path", doc: "The file, relative to the pipeline file.", example: "fixtures/items.json")
    static let format = Parameter<FixtureFormat>(
        "format", default: .auto,
        doc: "How to read it; auto goes by the extension (.json, .jsonl/.ndjson, .yaml/.yml, .csv)."
    )
    static let whole = Parameter<Bool>("whole", default: false, doc: "Emit the whole document as one element.")
    static let every = Parameter<RxTimeInterval?>(
        "every", doc: "Emit one element per period instead of all at once.", example: "100ms"
    ).above(RxTimeInterval.zero)
    static let header = CSVParameters.header
    static let numbers = CSVParameters.numbers
    static let separator = CSVParameters.separator
}

extension BuiltinComponents {
    /// `fixture: PATH` — the elements of a local data file.
    public static let fixture = ComponentSpec(
        name: "fixture",
        summary: "Emits the elements of a local data file: a JSON array, JSON Lines, YAML, or the whole document.",
        docs: """
            A JSON or YAML array gives one element per item (whole: true gives the document as one \
            element); any other document is one element. JSON Lines (.jsonl, .ndjson) are read a line \
            at a time, never the whole file. CSV (.csv, or format: csv) gives one element per record \
            (a line), an object of the header's names (header: false gives lists; numbers: true reads \
            numbers). Without every, elements are emitted as fast as they are \
            read; with every, one per period. Paths are relative to the pipeline file. A malformed \
            line of JSON Lines fails the pipeline, naming the file and line, or with onError is skipped \
            or reported on NAME.errors (its text as the element); a malformed document always fails.
            """,
        parameters: [Key.path, Key.format, Key.whole, Key.every, Key.header, Key.numbers, Key.separator],
        primary: Key.path,
        example: "source: { fixture: { path: fixtures/featured.json, every: 500ms } }",
        validate: { values, validation in
            validation.requireReadable(Key.path, in: values, what: "fixture file")
            CSVParameters.check(values, validation)
        },
        checkpointing: .keepsState("its place in the file: the element or the line it reached"),
        delivery: Delivery(
            .atLeastOnce,
            "with --state, a resumed run emits again what came after the last checkpoint; without it, a new run reads the file from the start"
        ),
        elementErrors: true,
        factory: .source { parameters, context in
            let path = context.resolvePath(parameters[Key.path])
            var format = parameters[Key.format].rawValue
            if format == "auto" {
                if path.hasSuffix(".jsonl") || path.hasSuffix(".ndjson") {
                    format = "jsonl"
                } else if path.hasSuffix(".yaml") || path.hasSuffix(".yml") {
                    format = "yaml"
                } else if path.hasSuffix(".csv") {
                    format = "csv"
                } else {
                    format = "json"
                }
            }
            let whole = parameters[Key.whole]
            let every = parameters[Key.every]
            let csv = CSVParameters.records(parameters)
            let scheduler = context.scheduler
            if format == "jsonl" && !whole {
                return PipelineSource(
                    { _ in
                        let lines = Fixture.jsonLines(path: path, every: every, scheduler: scheduler, context: context)
                        // Unpaced, read at the next turn, once every operator after it is subscribed.
                        return every == nil ? lines.subscribedAtNextTurn(on: scheduler) : lines
                    },
                    parallel: { _, stretch in
                        // Chosen at subscription (checkpoints are known then); paced, or keeping
                        // checkpoints (whose offsets follow each element), read as usual and run
                        // the stretch here. Not `deferred`: a forwarding step on every element.
                        Observable { observer, lifetime in
                            let lines =
                                every == nil && context.checkpoints == nil
                                ? Fixture.parallelJSONLines(
                                    path: path, stretch: stretch, scheduler: scheduler, context: context)
                                : stretch.serially(
                                    Fixture.jsonLines(path: path, every: every, scheduler: scheduler, context: context))
                            lines.subscribe(observer, in: lifetime)
                        }
                    })
            }
            return PipelineSource { _ in
                Observable.deferred {
                    let document =
                        format == "csv"
                        ? try Fixture.readCSV(path: path, csv, context: context)
                        : try Fixture.readDocument(path: path, format: format, context: context)
                    let elements: [Value]
                    if !whole, case .array(let items) = document { elements = items } else { elements = [document] }
                    // Resumed, it goes on from the element after the last one it emitted.
                    let next = StateBox(context.restoredState?.intValue ?? 0)
                    context.keepState { .int(next.value) }
                    guard let every else {
                        return Fixture.unpaced(elements, from: next, context: context).subscribedAtNextTurn(
                            on: scheduler)
                    }
                    return Fixture.paced(
                        elements, from: next, every: every, scheduler: scheduler, progress: context.meter?.progress)
                }
            }
        })
}

enum Fixture {
    /// A hint for a file of JSON Lines read as one JSON document (a `.log` file, say): its first
    /// two lines are each a JSON value.
    static func jsonLinesHint(_ text: String) -> String {
        let lines = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: true)
        guard lines.count >= 2,
            lines.prefix(2).allSatisfy({ line in (try? JSONParser.parse(Array(line.utf8))) != nil })
        else { return "" }
        return "; it holds one JSON value per line: add format: jsonl"
    }

    /// A CSV file's records as a list: objects of its header's names, or lists without one. A
    /// record that is not one fails the run, naming the file and the line.
    static func readCSV(path: String, _ csv: CSVRecords, context: ComponentContext) throws -> Value {
        guard let text = LocalFiles.readText(path) else { throw context.error("cannot read fixture file \(path)") }
        var names: [String]?
        var records: [Value] = []
        // By bytes: as a Character, "\r\n" is one and would not split at "\n".
        for (index, line) in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let bytes = Array(line)
            if bytes.isEmpty || bytes == [0x0D] { continue }
            do {
                let fields = try bytes.withUnsafeBufferPointer { try csv.fields($0) }
                if csv.header && names == nil {
                    names = fields
                    continue
                }
                records.append(try csv.value(fields, names: names))
            } catch {
                throw context.error("fixture \(path) line \(index + 1): \(error)")
            }
        }
        return .array(records)
    }

    static func readDocument(path: String, format: String, context: ComponentContext) throws -> Value {
        guard let text = LocalFiles.readText(path) else { throw context.error("cannot read fixture file \(path)") }
        if format == "yaml" {
            do throws(YAMLDocumentError) { return try YAMLDocument.value(of: text, file: path) } catch {
                throw context.error("fixture \(path) is not valid YAML: \(error)")
            }
        }
        do {
            return try JSONParser.parse(text)
        } catch {
            throw context.error("fixture \(path) is not valid JSON: \(error)\(jsonLinesHint(text))")
        }
    }

    /// Every element at once, in a loop that stops when the subscription ends or the run is
    /// interrupted (a signal).
    static func unpaced(_ elements: [Value], from next: StateBox<Int>, context: ComponentContext) -> Observable<Value> {
        let scheduler = context.scheduler
        let checkpoints = context.checkpoints
        let progress = context.meter?.progress
        return Observable { observer, lifetime in
            progress?.start(total: elements.count)
            while next.value < elements.count {
                if lifetime.isDisposed { return }
                checkpoints?.checkpointIfDue()
                if scheduler.isInterrupted {
                    // The process is about to exit: freeing a million-element document would
                    // take longer than a signal may wait, so it is left to the exit.
                    abandoned.withLock { $0.append(elements) }
                    return
                }
                next.value += 1
                progress?.advance(to: next.value)
                observer.on(.next(elements[next.value - 1]))
            }
            if !lifetime.isDisposed { observer.on(.completed) }
        }
    }

    /// Documents of interrupted runs, kept until the process exits.
    static let abandoned = Mutex<[[Value]]>([])

    /// One element per period, the first one period after subscription.
    static func paced(
        _ elements: [Value], from next: StateBox<Int>, every: RxTimeInterval, scheduler: any SchedulerType,
        progress: InputProgress? = nil
    ) -> Observable<Value> {
        Observable { observer, lifetime in
            progress?.start(total: elements.count)
            lifetime.add(
                scheduler.schedulePeriodic(startAfter: every, period: every) {
                    if lifetime.isDisposed { return }
                    if next.value < elements.count {
                        next.value += 1
                        progress?.advance(to: next.value)
                        observer.on(.next(elements[next.value - 1]))
                    }
                    if next.value >= elements.count {
                        observer.on(.completed)
                        lifetime.dispose()
                    }
                })
        }
    }

    /// The error for a fixture file that would not open (read `errno` at once).
    static func cannotOpen(_ path: String, _ context: ComponentContext) -> PipelineRuntimeError {
        context.error("cannot open fixture file \(path): \(String(cString: strerror(errno)))")
    }

    /// JSON Lines read a buffer at a time, the stretch after the source run on several threads
    /// (`parallel:`).
    static func parallelJSONLines(
        path: String, stretch: ParallelStretch, scheduler: any SchedulerType, context: ComponentContext
    ) -> Observable<Value> {
        Observable { observer, lifetime in
            guard let reader = LineReader(path: path, bufferSize: ParallelLines.bufferSize) else {
                observer.on(
                    .error(cannotOpen(path, context)))
                return
            }
            let progress = context.meter?.progress
            progress?.start(total: FileLines.size(of: path))
            let ending = ParallelLines.read(
                reader, workers: ParallelLines.Workers(stretch), to: observer, lifetime: lifetime,
                isLive: { !lifetime.isDisposed && !scheduler.isInterrupted },
                advanced: { progress?.advance(to: $0) },
                context: context, what: "fixture \(path)",
                failure: { error in context.error("reading fixture \(path): \(error)") })
            switch ending {
            case .exhausted: observer.on(.completed)
            case .failed(let error): observer.on(.error(error))
            case .stopped: break
            }
        }
    }

    /// Emits what `next` reads until it ends or the subscription does. Apart, its references
    /// passed in: used from the subscription's closure, the progress was retained and released
    /// around its call for every line.
    private static func emitAll(
        _ next: () -> Event<Value>?, reader: LineReader, to observer: AnyObserver<Value>, lifetime: Lifetime,
        scheduler: any SchedulerType, progress: InputProgress?, checkpoints: Checkpoints?
    ) {
        while !lifetime.isDisposed, !scheduler.isInterrupted, let event = next() {
            progress?.advance(to: reader.offset)
            observer.on(event)
            if event.isStopEvent { return }
            checkpoints?.checkpointIfDue()
            if case .next(let value) = consume event { reader.giveBack(consume value) }
        }
    }

    /// JSON Lines read a line at a time: in a loop (stopping as soon as the subscription ends), or
    /// one line per period.
    static func jsonLines(path: String, every: RxTimeInterval?, scheduler: any SchedulerType, context: ComponentContext)
        -> Observable<Value>
    {
        Observable { observer, lifetime in
            // Resumed, it reads on from the line after the last one it emitted.
            let restored = context.restoredState
            guard
                let reader = LineReader(
                    path: path, offset: restored?["offset"]?.intValue ?? 0,
                    lineNumber: restored?["line"]?.intValue ?? 0)
            else {
                observer.on(
                    .error(cannotOpen(path, context)))
                return
            }
            func next() -> Event<Value>? {
                while true {
                    do {
                        guard let value = try reader.nextJSONValue() else { return .completed }
                        return .next(value)
                    } catch let malformed as LineReader.MalformedLine {
                        // onError: a malformed line fails the source, or is dropped and the next read.
                        let failure = context.error("fixture \(path) line \(malformed.line): \(malformed.error)")
                        do { try context.elementFailed(failure, element: .string(malformed.text)) } catch {
                            return .error(failure)
                        }
                    } catch {
                        return .error(context.error("reading fixture \(path): \(error)"))
                    }
                }
            }
            context.keepState { ["offset": .int(reader.offset), "line": .int(reader.lineNumber)] }
            guard let every else {
                let progress = context.meter?.progress
                progress?.start(total: FileLines.size(of: path))
                emitAll(
                    next, reader: reader, to: observer, lifetime: lifetime, scheduler: scheduler, progress: progress,
                    checkpoints: context.checkpoints)
                return
            }
            lifetime.add(
                scheduler.schedulePeriodic(startAfter: every, period: every) {
                    guard !lifetime.isDisposed, let event = next() else { return }
                    observer.on(event)
                    if event.isStopEvent { lifetime.dispose() }
                    if case .next(let value) = consume event { reader.giveBack(consume value) }
                })
        }
    }
}
