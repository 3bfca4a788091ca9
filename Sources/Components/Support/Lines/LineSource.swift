import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// Where lines come from: a descriptor read to its end, the event that ends the source then
/// (called on the reading thread: it may wait for a program to exit), and what stops the producer
/// when the pipeline lets go first.
struct LineInput: @unchecked Sendable {
    let descriptor: Int32
    let end: @Sendable () -> Event<Value>
    let stop: () -> Void
}

/// Lines read from a descriptor (standard input, a program's output) into a source, on a thread
/// of their own on the real clock: what `stdin` and the `exec` source share.
enum LineSource {
    /// How many batches of lines may wait for the pipeline before the reader pauses.
    static let batchesInFlight = 8

    /// How lines are read: as text, as JSON, or as CSV records (whose first line may be the
    /// header). Used by the one thread that reads, in order.
    final class Decoding: @unchecked Sendable {
        enum Kind {
            case text, json
            case csv(CSVRecords)
        }

        let kind: Kind
        private var header: [String]?

        init(_ kind: Kind) {
            self.kind = kind
        }

        /// One line as an event: its text, its JSON value or its record (nil: the CSV header); a
        /// malformed line is an error event carrying `LineReader.MalformedLine`, which `pass`
        /// handles as `onError` says.
        func decode(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) -> Event<Value>? {
            func malformed(_ error: any Error) -> Event<Value> {
                .error(LineReader.MalformedLine(error: error, text: String(decoding: bytes, as: UTF8.self), line: line))
            }
            switch kind {
            case .text: return .next(.string(String(decoding: bytes, as: UTF8.self)))
            case .json:
                do throws(JSONError) {
                    return .next(try JSONParser.parse(bytes))
                } catch {
                    return malformed(error)
                }
            case .csv(let csv):
                do throws(CSVRecords.Malformed) {
                    if csv.header && header == nil {
                        header = try csv.fields(bytes)
                        return nil
                    }
                    return .next(try csv.value(try csv.fields(bytes), names: csv.header ? header : nil))
                } catch {
                    return malformed(error)
                }
            }
        }
    }

    /// Passes `event` on; a malformed line is dropped or fails the source, as `onError` says.
    /// Returns whether the source goes on.
    static func pass(
        _ event: Event<Value>, to observer: AnyObserver<Value>, what: String, context: ComponentContext
    ) -> Bool {
        guard case .error(let malformed as LineReader.MalformedLine) = event else {
            observer.on(event)
            return !event.isStopEvent
        }
        do {
            try context.elementFailed(
                context.error("\(what) line \(malformed.line): \(malformed.error)"), element: .string(malformed.text))
            return true
        } catch {
            observer.on(.error(error))
            return false
        }
    }

    /// The lines of what `open` starts at subscription: `what` names it in errors.
    static func observable(
        json: Bool, csv: CSVRecords? = nil, what: String, context: ComponentContext,
        open: @escaping () throws -> LineInput
    ) -> Observable<Value> {
        let name = context.componentName
        let location = context.location
        let makeError: @Sendable (String) -> PipelineRuntimeError = {
            PipelineRuntimeError($0, component: name, location: location)
        }
        let reading = Observable<Value> { observer, lifetime in
            let input: LineInput
            do { input = try open() } catch {
                observer.on(.error(error))
                return
            }
            let lines = Lines(
                input: input, reader: LineReader(descriptor: input.descriptor),
                decoding: Decoding(csv.map { .csv($0) } ?? (json ? .json : .text)), what: what, makeError: makeError)
            if let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler {
                lines.readOnAThread(to: observer, lifetime: lifetime, on: scheduler, context: context)
            } else {
                lines.readAllNow(to: observer, lifetime: lifetime, context: context)
            }
        }
        // On the virtual clock everything is read at once: at the next turn, once every operator
        // after the source is subscribed, as lines come on the real clock.
        return context.scheduler is any ConcurrentDeliveryScheduler
            ? reading : reading.subscribedAtNextTurn(on: context.scheduler)
    }

    /// One subscription's input, read line by line and decoded.
    private struct Lines {
        let input: LineInput
        let reader: LineReader
        let decoding: Decoding
        /// What the input is, in errors.
        let what: String
        let makeError: @Sendable (String) -> PipelineRuntimeError

        /// On a virtual clock: everything, now.
        func readAllNow(to observer: AnyObserver<Value>, lifetime: Lifetime, context: ComponentContext) {
            do {
                while !lifetime.isDisposed, !context.scheduler.isInterrupted,
                    let decoded = try reader.nextLine({ decoding.decode($0, line: reader.lineNumber) })
                {
                    guard let event = decoded else { continue }
                    if !pass(event, to: observer, what: what, context: context) {
                        input.stop()
                        return
                    }
                }
                if lifetime.isDisposed { input.stop() } else { observer.on(input.end()) }
            } catch {
                input.stop()
                observer.on(.error(makeError("reading \(what): \(error)")))
            }
        }

        /// On the real clock: on a thread of its own, the lines handed over in batches, so a fast
        /// producer does not pay a hop per line; a batch goes as soon as no further line is
        /// buffered, so a slow one is not delayed.
        func readOnAThread(
            to observer: AnyObserver<Value>, lifetime: Lifetime, on scheduler: any ConcurrentDeliveryScheduler,
            context: ComponentContext
        ) {
            let target = SchedulerBound((observer, lifetime, reader, context))
            // Backpressure: at most `batchesInFlight` batches wait for the pipeline; past that the
            // reader stops reading, so a producer faster than the pipeline fills the pipe, not memory.
            let credits = DispatchSemaphore.credits(batchesInFlight)
            let stopped = InterruptionFlag()
            let (input, decoding, what, makeError) = (input, decoding, what, makeError)
            lifetime.onDispose {
                stopped.raise()
                input.stop()
                credits.signal()  // a reader waiting for room sees the stop
            }
            let thread = Thread {
                var batch: [SchedulerBound<Event<Value>>] = []
                func deliver() {
                    let events = batch
                    batch.removeAll()
                    credits.wait()
                    if stopped.isRaised { return }
                    scheduler.enqueue {
                        defer { credits.signal() }
                        let (observer, lifetime, _, context) = target.value
                        for event in events {
                            if lifetime.isDisposed { return }
                            if !LineSource.pass(event.value, to: observer, what: what, context: context) {
                                lifetime.dispose()
                            }
                        }
                    }
                }
                let reader = target.value.2
                do {
                    while !stopped.isRaised,
                        let decoded = try reader.nextLine({ decoding.decode($0, line: reader.lineNumber) })
                    {
                        guard let event = decoded else { continue }
                        batch.append(SchedulerBound(event))
                        if batch.count >= 256 || !reader.hasBufferedLine { deliver() }
                    }
                    if !stopped.isRaised { batch.append(SchedulerBound(input.end())) }
                } catch {
                    batch.append(SchedulerBound(.error(makeError("reading \(what): \(error)"))))
                }
                deliver()
            }
            thread.start()
        }
    }
}
