import Dispatch
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads JSON Lines and runs the element-wise stretch after the source (`parallel: N`) on several
/// threads: a buffer of lines at a time is parsed and put through the stretch by up to N workers,
/// each over its own run of lines with its own step, and the results are emitted in the order of
/// the lines, on the pipeline's thread. What a serial run would have done at a line (a malformed
/// line handled as `onError` says, an operator's error ending the stream) happens at that line.
enum ParallelLines {
    /// What became of one line.
    enum Outcome {
        case blank
        case value(Value)
        case dropped
        case malformed(JSONError, text: String)
        case failed(any Error)
    }

    /// Lines handed out at once; small enough to start emitting soon, large enough that each
    /// worker's share outweighs waking it.
    static let batchLimit = 32768
    /// The read buffer: a batch is the whole lines of one buffer, so larger buffers mean fewer
    /// points where the workers wait for the pipeline's thread.
    static let bufferSize = 2 << 20

    /// How reading a file ended.
    enum Ending {
        /// At its end.
        case exhausted
        /// The subscription ended or the run was interrupted.
        case stopped
        /// An error to end the stream with.
        case failed(any Error)
    }

    /// The workers' steps of `stretch`, made once a subscription: the pipeline's thread's own,
    /// and a pool the helpers take one from while they work (batches' helpers may overlap, and a
    /// step keeps its scope, so no two threads share one).
    final class Workers: @unchecked Sendable {  // `step` and `dropped` are used on the pipeline's thread only
        let count: Int
        let step: ElementStep
        let dropped: (Int) -> Void
        private let helperSteps: [ElementStep]
        // An NSLock (pthread) rather than a Mutex: the thread sanitizer does not follow the
        // latter's futex on Linux. Held for a few instructions a batch.
        private let lock = NSLock()
        /// The places in `helperSteps` of the steps no helper is using.
        private var free: [Int]

        init(_ stretch: ParallelStretch) {
            count = max(1, stretch.workers)
            step = stretch.makeStep()
            dropped = stretch.dropped
            // A batch's helpers may still be letting go while the next two batches' start.
            helperSteps = (0..<3 * (count - 1)).map { _ in stretch.makeStep() }
            free = Array(helperSteps.indices)
        }

        /// The memory of a batch: kept for the next batch rather than freed, since a fresh buffer
        /// of a few MB is mapped anew by malloc and each of its pages then faults when first
        /// written.
        struct Memory: @unchecked Sendable {
            var bytes: UnsafeMutableBufferPointer<UInt8>
            var lines: UnsafeMutableBufferPointer<Range<Int>>
            var outcomes: UnsafeMutableBufferPointer<Outcome>
        }
        private var spare: [Memory] = []

        deinit {
            for memory in spare { Self.free(memory) }
        }

        /// Memory for a batch of `byteCount` bytes and `lineCount` lines (lines and outcomes not
        /// initialized).
        func memory(byteCount: Int, lineCount: Int) -> Memory {
            guard var memory = lock.withLock({ spare.popLast() }) else {
                return Memory(
                    bytes: .allocate(capacity: max(byteCount, ParallelLines.bufferSize)),
                    lines: .allocate(capacity: max(lineCount, ParallelLines.batchLimit)),
                    outcomes: .allocate(capacity: max(lineCount, ParallelLines.batchLimit)))
            }
            if memory.bytes.count < byteCount {
                memory.bytes.deallocate()
                memory.bytes = .allocate(capacity: byteCount)
            }
            if memory.outcomes.count < lineCount {
                memory.lines.deallocate()
                memory.outcomes.deallocate()
                memory.lines = .allocate(capacity: lineCount)
                memory.outcomes = .allocate(capacity: lineCount)
            }
            return memory
        }

        private static func free(_ memory: Memory) {
            memory.bytes.deallocate()
            memory.lines.deallocate()
            memory.outcomes.deallocate()
        }

        /// Takes back a batch's memory (its outcomes deinitialized) for the next.
        func recycle(_ memory: Memory) {
            let kept = lock.withLock {
                guard spare.count < 3 else { return false }
                spare.append(memory)
                return true
            }
            if !kept { Self.free(memory) }
        }

        /// Runs `body` with a step no other thread is using.
        func withHelperStep(_ body: (ElementStep) -> Void) {
            guard let place = lock.withLock({ free.popLast() }) else { return }
            body(helperSteps[place])
            lock.withLock { free.append(place) }
        }
    }

    /// Reads `reader` to its end, emitting what the stretch gives for each line in order; stops
    /// at the first error (an operator's, a read error worded by `failure`, a malformed line —
    /// `WHAT line N: …` — unless the source's `onError` skips or reports it) and returns it.
    /// `advanced` gets the reader's offset after each buffer's lines are emitted. The next
    /// buffer is read and handed to the helpers as soon as the current one is all handed out,
    /// so they decode it while the pipeline's thread still emits the current one.
    static func read(
        _ reader: LineReader, workers: Workers, emit: (Value) -> Void, isLive: () -> Bool,
        advanced: (Int) -> Void, context: ComponentContext, what: String, failure: (any Error) -> any Error
    ) -> Ending {
        var batches = Batches(reader: reader, workers: workers)
        var failed: (any Error)?
        var current = batches.next(failure: failure)
        while let batch = current {
            var upcoming: Batch?
            var dropped = 0
            let stopped = batch.run(
                emit: { index, outcome in
                    if !isLive() { return false }
                    switch outcome {
                    case .blank: return true
                    case .dropped: dropped += 1
                    case .value(let value): emit(value)
                    case .failed(let error):
                        // Read, though it failed: the summary counts it as read.
                        dropped += 1
                        failed = error
                        return false
                    case .malformed(let error, let text):
                        dropped += 1
                        let problem = context.error("\(what) line \(batch.firstLine + index): \(error)")
                        do { try context.elementFailed(problem, element: .string(text)) } catch {
                            failed = problem
                            return false
                        }
                    }
                    return true
                },
                allClaimed: {
                    if upcoming == nil { upcoming = batches.next(failure: failure) }
                    return upcoming
                })
            workers.dropped(dropped)
            batch.retire()
            if stopped {
                upcoming?.abandon()
                return failed.map { .failed($0) } ?? .stopped
            }
            advanced(batch.endOffset)
            current = upcoming ?? batches.next(failure: failure)
        }
        if let readFailure = batches.readFailure { return .failed(readFailure) }
        return isLive() ? .exhausted : .stopped
    }

    /// The reader's buffers of lines one after another, each handed to the helpers as it is read;
    /// none after a read error (kept, worded by `failure`) or the reader's end.
    private struct Batches {
        let reader: LineReader
        let workers: Workers
        private(set) var readFailure: (any Error)?
        private var exhausted = false
        private var started = false

        init(reader: LineReader, workers: Workers) {
            self.reader = reader
            self.workers = workers
        }

        mutating func next(failure: (any Error) -> any Error) -> Batch? {
            guard readFailure == nil, !exhausted else { return nil }
            let (firstLine, workers) = (reader.lineNumber + 1, workers)
            do {
                // The first batch is small, so the helpers start as soon as a little is read.
                let limit = started ? batchLimit : batchLimit / 8
                started = true
                let batch = try reader.nextLines(limit: limit) { bytes, ranges in
                    Batch(copying: bytes, ranges: ranges, firstLine: firstLine, workers: workers)
                }
                guard let batch else {
                    exhausted = true
                    return nil
                }
                batch.endOffset = reader.offset
                batch.start()
                return batch
            } catch {
                readFailure = failure(error)
                return nil
            }
        }
    }

    /// One buffer of lines, copied out of the reader so the next can be read while this one is
    /// still decoded and emitted, cut in chunks that helper threads and the pipeline's thread
    /// decode, while the pipeline's thread hands out each chunk's outcomes in order as soon as it
    /// is done, decoding a chunk itself whenever the next one in order is not ready yet.
    final class Batch: @unchecked Sendable {
        private let memory: Workers.Memory
        let bytes: UnsafeMutableBufferPointer<UInt8>
        /// Where each line is in `bytes` (in the batch's memory: kept from batch to batch).
        let ranges: UnsafeMutableBufferPointer<Range<Int>>
        /// The number of the first line, from 1.
        let firstLine: Int
        /// The reader's offset after the batch's lines.
        var endOffset = 0
        let workers: Workers
        let chunkCount: Int
        /// Lines a chunk: at least 256, and no more than 64 chunks (a bit each in `finished`).
        let chunkLines: Int
        let outcomes: UnsafeMutableBufferPointer<Outcome>
        /// The chunks the pipeline's thread decoded itself (a bit each; that thread only).
        private var decodedHere: UInt64 = 0
        private let nextChunk = Atomic<Int>(0)
        private let finished = Atomic<UInt64>(0)
        private let helpersRunning = Atomic<Int>(0)

        init(
            copying source: UnsafeBufferPointer<UInt8>, ranges lines: UnsafeBufferPointer<Range<Int>>, firstLine: Int,
            workers: Workers
        ) {
            let base = lines.first?.lowerBound ?? 0
            let top = lines.last?.upperBound ?? 0
            memory = workers.memory(byteCount: top - base, lineCount: lines.count)
            bytes = UnsafeMutableBufferPointer(rebasing: memory.bytes[0..<(top - base)])
            _ = bytes.initialize(from: source[base..<top])
            ranges = UnsafeMutableBufferPointer(rebasing: memory.lines[0..<lines.count])
            for (index, line) in lines.enumerated() {
                (ranges.baseAddress! + index).initialize(to: (line.lowerBound - base)..<(line.upperBound - base))
            }
            self.firstLine = firstLine
            self.workers = workers
            chunkLines = max(256, (ranges.count + 63) / 64)
            chunkCount = (ranges.count + chunkLines - 1) / chunkLines
            outcomes = UnsafeMutableBufferPointer(rebasing: memory.outcomes[0..<ranges.count])
            outcomes.initialize(repeating: .blank)
        }

        deinit {
            outcomes.deinitialize()
            workers.recycle(memory)
        }

        /// Wakes the helpers (up to one fewer than the workers; the pipeline's thread is one).
        func start() {
            for _ in 1..<max(1, min(workers.count, chunkCount)) {
                helpersRunning.wrappingAdd(1, ordering: .relaxed)
                DispatchQueue.global().async {
                    self.workers.withHelperStep { step in
                        while let chunk = self.claim() { self.decode(chunk, with: step) }
                    }
                    self.helpersRunning.wrappingSubtract(1, ordering: .releasing)
                }
            }
        }

        /// Claims a chunk to decode, or nil when all are claimed.
        func claim() -> Int? {
            guard nextChunk.load(ordering: .relaxed) < chunkCount else { return nil }
            let chunk = nextChunk.wrappingAdd(1, ordering: .relaxed).oldValue
            return chunk < chunkCount ? chunk : nil
        }

        /// The lines of `chunk`.
        private func lines(of chunk: Int) -> Range<Int> {
            (chunk * chunkLines)..<min(ranges.count, (chunk + 1) * chunkLines)
        }

        private func isFinished(_ chunk: Int) -> Bool {
            finished.load(ordering: .acquiring) & (1 << UInt64(chunk)) != 0
        }

        func decode(_ chunk: Int, with step: ElementStep) {
            let source = UnsafeBufferPointer(bytes)
            var scratch = JSONParser.Scratch()
            for index in lines(of: chunk) {
                outcomes[index] = ParallelLines.outcome(source, ranges[index], step, scratch: &scratch)
            }
            finished.bitwiseOr(1 << UInt64(chunk), ordering: .releasing)
        }

        /// Lets go of the batch on a helper thread, where the outcomes the helpers made are freed:
        /// glibc's malloc frees a block from another thread's arena under that arena's lock, which
        /// the helpers then wait on (about a tenth of a W2 run).
        func retire() {
            DispatchQueue.global().async { withExtendedLifetime(self) {} }
        }

        /// Decodes `chunk` on the pipeline's thread, noting it: `run` moves such a chunk's outcomes
        /// out, so what the pipeline lets go of is freed on the thread whose arena it came from.
        func decodeHere(_ chunk: Int) {
            decodedHere |= 1 << UInt64(chunk)
            decode(chunk, with: workers.step)
        }

        /// Claims what no helper has started and waits for the helpers to let go of the batch.
        func abandon() {
            while let chunk = claim() { finished.bitwiseOr(1 << UInt64(chunk), ordering: .relaxed) }
            while helpersRunning.load(ordering: .acquiring) != 0 { sched_yield() }
        }

        /// Calls `emit` with each line's outcome in order until it returns false (then true is
        /// returned: the stream ended, and no helper touches this batch any more). Once every
        /// chunk is claimed it calls `allClaimed`, which may start the next batch, and decodes
        /// that one's chunks while it waits for this one's.
        func run(emit: (Int, Outcome) -> Bool, allClaimed: () -> Batch?) -> Bool {
            var next: Batch?
            for chunk in 0..<chunkCount {
                while !isFinished(chunk) {
                    if let other = claim() {
                        decodeHere(other)
                    } else if next == nil {
                        next = allClaimed()
                        if next == nil { sched_yield() }
                    } else if let other = next?.claim() {
                        next?.decodeHere(other)
                    } else {
                        sched_yield()
                    }
                }
                if next == nil, nextChunk.load(ordering: .relaxed) >= chunkCount { next = allClaimed() }
                // A helper's outcomes are copied, not moved out: the batch keeps the last reference
                // to what the pipeline lets go of, for `retire` to free on a helper thread. This
                // thread's own are moved out (one reference count less), to be freed here.
                let own = decodedHere & (1 << UInt64(chunk)) != 0
                for index in lines(of: chunk) {
                    let outcome: Outcome
                    if own {
                        let slot = outcomes.baseAddress! + index
                        outcome = slot.move()
                        slot.initialize(to: .blank)
                    } else {
                        outcome = outcomes[index]
                    }
                    if !emit(index, outcome) {
                        abandon()
                        return true
                    }
                }
            }
            return false
        }
    }

    static func outcome(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ step: ElementStep, scratch: inout JSONParser.Scratch
    ) -> Outcome {
        let line = UnsafeBufferPointer(rebasing: bytes[range])
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .blank }
        let value: Value
        do throws(JSONError) {
            value = try JSONParser.parseOnDemand(line, reusing: &scratch)
        } catch {
            return .malformed(error, text: String(decoding: line, as: UTF8.self))
        }
        do {
            guard let result = try step(consume value) else { return .dropped }
            return .value(result)
        } catch {
            return .failed(error)
        }
    }
}

extension ParallelStretch {
    /// `source` with the stretch run on it here, an element at a time: for a source that cannot
    /// run it on several threads just now (paced, keeping checkpoints).
    func serially(_ source: Observable<Value>) -> Observable<Value> {
        Observable { observer, lifetime in
            let step = makeStep()
            let dropped = self.dropped
            source.compactMap { element in
                let result = try step(element)
                if result == nil { dropped(1) }
                return result
            }.subscribe(observer, in: lifetime)
        }
    }
}
