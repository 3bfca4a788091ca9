import Foundation
@_spi(Host) import Pipeline
import Reactive

private enum LineFormat: String, ParameterChoice {
    case lines, jsonl
}
private enum Key {
    static let format = Parameter<LineFormat>(
        "format", default: .lines, doc: "lines: each line as a string; jsonl: each line parsed as JSON.")
}

extension BuiltinComponents {
    /// `stdin` — the lines of standard input.
    public static let stdin = ComponentSpec(
        name: "stdin",
        summary: "Emits each line of standard input, as text or parsed as JSON; completes at the end of input.",
        docs: """
            On the real clock, lines are read on a thread of their own and delivered to the pipeline as \
            they come; on the virtual clock, all of standard input is read at subscription.
            """,
        parameters: [Key.format],
        primary: Key.format,
        example: "source: stdin",
        factory: .source { parameters, context in
            let json = parameters[Key.format] == .jsonl
            return PipelineSource { _ in StandardInput.observable(json: json, context: context) }
        })
}

enum StandardInput {
    /// How many batches of lines may wait for the pipeline before the reader pauses.
    static let batchesInFlight = 8

    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, json: Bool, line: Int, error makeError: (String) -> PipelineRuntimeError
    ) -> Event<Value> {
        guard json else { return .next(.string(String(decoding: bytes, as: UTF8.self))) }
        do {
            return .next(try JSONParser.parse(bytes))
        } catch {
            return .error(makeError("standard input line \(line): \(error)"))
        }
    }

    static func observable(json: Bool, context: ComponentContext) -> Observable<Value> {
        let name = context.componentName
        let location = context.location
        let makeError: @Sendable (String) -> PipelineRuntimeError = {
            PipelineRuntimeError($0, component: name, location: location)
        }
        return Observable { observer, lifetime in
            let reader = LineReader(descriptor: 0)
            guard let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler else {
                // Virtual clock: read everything now.
                do {
                    while !lifetime.isDisposed, !context.scheduler.isInterrupted,
                        let event = try reader.nextLine({
                            decode($0, json: json, line: reader.lineNumber, error: makeError)
                        })
                    {
                        observer.on(event)
                        if event.isStopEvent { return }
                    }
                    if !lifetime.isDisposed { observer.on(.completed) }
                } catch {
                    observer.on(.error(makeError("reading standard input: \(error)")))
                }
                return
            }
            let target = SchedulerBound((observer, lifetime, reader))
            // Backpressure: at most `batchesInFlight` batches wait for the pipeline; past that the
            // reader stops reading, so a producer faster than the pipeline fills the pipe, not memory.
            let credits = DispatchSemaphore(value: batchesInFlight)
            let stopped = InterruptionFlag()
            lifetime.onDispose {
                stopped.raise()
                credits.signal()  // a reader waiting for room sees the stop
            }
            let thread = Thread {
                // Lines are handed over in batches, so a fast producer does not pay a hop per line;
                // a batch goes as soon as no further line is buffered, so a slow one is not delayed.
                var batch: [SchedulerBound<Event<Value>>] = []
                func deliver() {
                    let events = batch
                    batch.removeAll()
                    credits.wait()
                    if stopped.isRaised { return }
                    scheduler.enqueue {
                        defer { credits.signal() }
                        let (observer, lifetime, _) = target.value
                        for event in events {
                            if lifetime.isDisposed { return }
                            observer.on(event.value)
                            if event.value.isStopEvent { lifetime.dispose() }
                        }
                    }
                }
                let reader = target.value.2
                do {
                    while !stopped.isRaised,
                        let event = try reader.nextLine({
                            decode($0, json: json, line: reader.lineNumber, error: makeError)
                        })
                    {
                        batch.append(SchedulerBound(event))
                        if batch.count >= 256 || !reader.hasBufferedLine { deliver() }
                    }
                    batch.append(SchedulerBound(.completed))
                } catch {
                    batch.append(SchedulerBound(.error(makeError("reading standard input: \(error)"))))
                }
                deliver()
            }
            thread.start()
        }
    }
}
