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
        // Boxed: a rare case, and without the box every outcome took its 40 bytes (48 a line; 24
        // now, a value's size), in memory written on one core and read on another.
        indirect case malformed(JSONError, text: String)
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
    /// and a pool the helpers take one from while they work (a step keeps its scope, so no two
    /// threads share one).
    final class Workers: @unchecked Sendable {  // `step` and `dropped` are used on the pipeline's thread only
        let count: Int
        let step: ElementStep
        let dropped: (Int) -> Void
        private let helperSteps: [ElementSteps.Made]
        // An NSLock (pthread) rather than a Mutex: the thread sanitizer does not follow the
        // latter's futex on Linux. Held for a few instructions a batch.
        private let lock = NSLock()
        /// The places in `helperSteps` of the steps no helper is using.
        private var free: [Int]

        init(_ stretch: ParallelStretch) {
            count = max(1, stretch.workers)
            step = stretch.makeStep()
            dropped = stretch.dropped
            // Helpers stay on for a whole file, but a `file` source reads several in turn with the
            // same workers: one file's helpers may still be letting go while the next one's start.
            helperSteps = (0..<3 * (count - 1)).map { _ in ElementSteps.Made(stretch.makeStep()) }
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

        /// Memory for a batch of `lineCount` lines (lines and outcomes not initialized), with a
        /// buffer of `byteCount` bytes for the reader to go on with.
        func memory(byteCount: Int, lineCount: Int) -> Memory {
            guard var memory = lock.withLock({ spare.popLast() }) else {
                return Memory(
                    bytes: .allocate(capacity: byteCount),
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
            body(helperSteps[place].step)
            lock.withLock { free.append(place) }
        }
    }

    /// Reads `reader` to its end, emitting what the stretch gives for each line in order; stops
    /// at the first error (an operator's, a read error worded by `failure`, a malformed line —
    /// `WHAT line N: …` — unless the source's `onError` skips or reports it) and returns it.
    /// `advanced` gets the reader's offset after each buffer's lines are emitted. The helpers read
    /// the buffers after the first themselves (see `Feed`), so the pipeline's thread mostly emits.
    /// It stops once `lifetime` is disposed (looked at every line) or `isLive` says so (asked
    /// every 256 lines: an interruption, read through the scheduler, need not stop it at once).
    static func read(
        _ reader: LineReader, workers: Workers, to observer: AnyObserver<Value>, lifetime: Lifetime,
        isLive: () -> Bool, advanced: (Int) -> Void, context: ComponentContext, what: String,
        failure: (any Error) -> any Error
    ) -> Ending {
        let feed = Feed(reader: reader, workers: workers)
        var failed: (any Error)?
        var current = feed.first()
        while let batch = current {
            var dropped = 0
            let stopped = batch.run(
                emit: { index, outcome in
                    if lifetime.isDisposed || (index & 255 == 0 && !isLive()) { return (false, outcome) }
                    // Moved on, not copied: each copy is a reference count taken and given back.
                    switch consume outcome {
                    case .blank: return (true, .blank)
                    case .dropped: dropped += 1
                    case .value(let value):
                        let event = Event.next(value)
                        observer.on(event)
                        // Taken back, moved: a helper's value goes back to its batch, for the helper
                        // to free (a copy here was a pair of reference counts on the helper's cache line).
                        if case .next(let back) = consume event { return (true, .value(back)) }
                    case .failed(let error):
                        // Read, though it failed: the summary counts it as read.
                        dropped += 1
                        failed = error
                        return (false, .blank)
                    case .malformed(let error, let text):
                        dropped += 1
                        let problem = context.error("\(what) line \(batch.firstLine + index): \(error)")
                        do { try context.elementFailed(problem, element: .string(text)) } catch {
                            failed = problem
                            return (false, .blank)
                        }
                    }
                    return (true, .blank)
                },
                allClaimed: { feed.upcoming() })
            workers.dropped(dropped)
            if stopped {
                feed.stop()
                return failed.map { .failed($0) } ?? .stopped
            }
            advanced(batch.endOffset)
            current = feed.advance()
        }
        if let readFailure = feed.readFailure { return .failed(failure(readFailure)) }
        return isLive() ? .exhausted : .stopped
    }

    /// The reader's buffers of lines one after another, at most `readAhead` beyond the one being
    /// emitted; none after a read error (kept) or the reader's end. A helper starting on the last
    /// batch read reads the next one first, so the pipeline's thread, which bounds the run, finds
    /// it ready (it reads one itself only when none is). The helpers stay on from batch to batch
    /// (no thread is woken per batch) and free the outcomes of the batches emitted, waiting here
    /// when they are ahead.
    final class Feed: @unchecked Sendable {  // its state is used under `condition` only
        /// Batches read beyond the one being emitted: enough that a helper always has lines to
        /// decode while the pipeline's thread emits.
        static let readAhead = 2
        private let reader: LineReader
        private let workers: Workers
        // An NSCondition (pthread) rather than a Mutex: the thread sanitizer does not follow the
        // latter's futex on Linux.
        private let condition = NSCondition()
        /// The batch being emitted, then those read after it, in order.
        private var current: Batch?
        private var ahead: [Batch] = []
        /// Batches emitted, for a helper to free their outcomes (see `Batch.freeOutcomes`).
        private var emitted: [Batch] = []
        /// Whether a thread is reading the next batch (the reader is used by one at a time).
        private var reading = false
        private var exhausted = false
        private var stopped = false
        private var failure: (any Error)?
        private var batchesRead = 0

        init(reader: LineReader, workers: Workers) {
            self.reader = reader
            self.workers = workers
        }

        /// The read error that ended the input, if one did.
        var readFailure: (any Error)? { condition.withLock { failure } }

        /// Reads the first batch (a small one, so the helpers start as soon as a little is read)
        /// and starts the helpers on it.
        func first() -> Batch? {
            condition.lock()
            let batch = readLocked()
            current = batch
            condition.unlock()
            batch?.start(feed: self)
            return batch
        }

        /// The batch after the one being emitted, if it has been read (for the pipeline's thread
        /// to decode while it waits).
        func upcoming() -> Batch? {
            condition.withLock { ahead.first }
        }

        /// Moves on to the batch after the one emitted: read already, being read (waited for), or
        /// read here.
        func advance() -> Batch? {
            condition.lock()
            defer { condition.unlock() }
            while ahead.isEmpty && reading { condition.wait() }
            // A helper frees its outcomes; with none left (the input's end), the last reference does.
            if let current, workers.count > 1 { emitted.append(current) }
            let next = ahead.isEmpty ? readLocked() : ahead.removeFirst()
            current = next
            condition.broadcast()  // a helper waiting for room to read ahead
            return next
        }

        /// Reads the batch after `batch` now if it is the last one read and there is room: a
        /// helper starting on a batch reads the next, so one is ready when the pipeline's thread
        /// moves on.
        func readAfter(_ batch: Batch) {
            condition.lock()
            defer { condition.unlock() }
            guard !reading, ahead.count < Self.readAhead, batchesRead == batch.sequence + 1 else { return }
            if let read = readLocked() {
                ahead.append(read)
                condition.broadcast()
            }
        }

        /// The batches emitted since the last call, whose outcomes the caller frees.
        func takeEmitted() -> [Batch] {
            condition.withLock {
                defer { emitted.removeAll(keepingCapacity: true) }
                return emitted
            }
        }

        /// The batch for a helper that ran out of lines in `batch` to decode next: one read
        /// after it, or one it reads now; nil once there are none (the end, an error) or the
        /// stream stopped. The helper is counted as running in the batch returned.
        func following(_ batch: Batch) -> Batch? {
            condition.lock()
            defer { condition.unlock() }
            while !stopped {
                if let current, current.sequence > batch.sequence { return current.joined() }
                if let later = ahead.first(where: { $0.sequence > batch.sequence }) { return later.joined() }
                if exhausted || failure != nil { return nil }
                if !reading && ahead.count < Self.readAhead {
                    guard let read = readLocked() else { return nil }
                    ahead.append(read)
                    condition.broadcast()
                    return stopped ? nil : read.joined()
                }
                condition.wait()
            }
            return nil
        }

        /// Stops reading, waits for a read under way, and lets go of every batch read ahead
        /// (no helper decodes any of them once this returns).
        func stop() {
            condition.lock()
            stopped = true
            condition.broadcast()
            while reading { condition.wait() }
            let read = ahead
            ahead = []
            current = nil
            condition.unlock()
            for batch in read { batch.abandon() }
        }

        /// Reads the next batch; called holding the lock, which it lets go of while it reads.
        private func readLocked() -> Batch? {
            guard !stopped, !exhausted, failure == nil else { return nil }
            reading = true
            let sequence = batchesRead
            batchesRead += 1
            condition.unlock()
            var batch: Batch?
            var error: (any Error)?
            let (firstLine, workers) = (reader.lineNumber + 1, workers)
            // The batch's memory first: the reader writes the lines' ranges straight into it.
            let limit = sequence == 0 ? batchLimit / 8 : batchLimit
            var memory = workers.memory(byteCount: reader.capacity, lineCount: limit)
            do {
                batch = try reader.nextLines(into: UnsafeMutableBufferPointer(rebasing: memory.lines[0..<limit])) {
                    buffer, count, capacity in
                    if memory.bytes.count < capacity {  // the reader grew its buffer for a long line
                        memory.bytes.deallocate()
                        memory.bytes = .allocate(capacity: capacity)
                    }
                    let replacement = memory.bytes
                    memory.bytes = buffer
                    let batch = Batch(
                        memory: memory, lineCount: count, firstLine: firstLine, sequence: sequence, workers: workers)
                    return (batch, replacement)
                }
                batch?.endOffset = reader.offset
            } catch let readError {
                error = readError
            }
            if batch == nil { workers.recycle(memory) }
            condition.lock()
            reading = false
            if let error { failure = error } else if batch == nil { exhausted = true }
            condition.broadcast()
            return batch
        }
    }

    /// One buffer of lines, taken from the reader (which goes on with another) so the next can be
    /// read while this one is still decoded and emitted, cut in chunks that helper threads and the
    /// pipeline's thread decode, while the pipeline's thread hands out each chunk's outcomes in
    /// order as soon as it is done, decoding a chunk itself whenever the next one in order is not
    /// ready yet.
    final class Batch: @unchecked Sendable {
        private let memory: Workers.Memory
        let bytes: UnsafeMutableBufferPointer<UInt8>
        /// Where each line is in `bytes` (in the batch's memory: kept from batch to batch).
        let ranges: UnsafeMutableBufferPointer<Range<Int>>
        /// The number of the first line, from 1.
        let firstLine: Int
        /// Its place among the reader's batches, from 0.
        let sequence: Int
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

        /// A batch of the first `lineCount` lines of `memory`, whose bytes are the buffer the
        /// reader read them into and whose ranges it wrote: nothing is copied.
        init(memory: Workers.Memory, lineCount: Int, firstLine: Int, sequence: Int, workers: Workers) {
            self.memory = memory
            ranges = UnsafeMutableBufferPointer(rebasing: memory.lines[0..<lineCount])
            bytes = UnsafeMutableBufferPointer(rebasing: memory.bytes[0..<(ranges.last?.upperBound ?? 0)])
            self.firstLine = firstLine
            self.sequence = sequence
            self.workers = workers
            chunkLines = max(256, (ranges.count + 63) / 64)
            chunkCount = (ranges.count + chunkLines - 1) / chunkLines
            outcomes = UnsafeMutableBufferPointer(rebasing: memory.outcomes[0..<ranges.count])
            outcomes.initialize(repeating: .blank)
        }

        /// Whether `freeOutcomes` ran (then the outcomes are no longer initialized).
        private var outcomesFreed = false

        deinit {
            if !outcomesFreed { outcomes.deinitialize() }
            workers.recycle(memory)
        }

        /// Frees what the lines became, on the calling thread (a helper's): glibc's malloc keeps a
        /// freed block in the freeing thread's cache, where the helper's next allocations find it.
        /// Only once the batch was emitted.
        func freeOutcomes() {
            outcomes.deinitialize()
            outcomesFreed = true
        }

        /// Wakes the helpers (one fewer than the workers; the pipeline's thread is one), which
        /// then go on from batch to batch through `feed` until there are none.
        func start(feed: Feed) {
            for _ in 1..<workers.count {
                helpersRunning.wrappingAdd(1, ordering: .relaxed)
                DispatchQueue.global().async {
                    ThreadHeap.grow(to: ThreadHeap.helperBytes)
                    var batch = self
                    self.workers.withHelperStep { step in
                        while true {
                            feed.readAfter(batch)
                            while let chunk = batch.claim() { batch.decode(chunk, with: step) }
                            for emitted in feed.takeEmitted() { emitted.freeOutcomes() }
                            guard let next = feed.following(batch) else { return }
                            batch.helpersRunning.wrappingSubtract(1, ordering: .releasing)
                            batch = next
                        }
                    }
                    batch.helpersRunning.wrappingSubtract(1, ordering: .releasing)
                }
            }
        }

        /// Counts one more helper running in the batch (under the feed's lock, so `abandon` after
        /// a stop sees it); returns the batch.
        func joined() -> Batch {
            helpersRunning.wrappingAdd(1, ordering: .relaxed)
            return self
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

        /// Calls `emit` with each line's outcome in order until it says to stop (then true is
        /// returned: the stream ended, and no helper touches this batch any more); what `emit`
        /// hands back stays in the batch. Once every chunk is claimed it calls `allClaimed`, which
        /// may start the next batch, and decodes that one's chunks while it waits for this one's.
        func run(emit: (Int, consuming Outcome) -> (going: Bool, left: Outcome), allClaimed: () -> Batch?) -> Bool {
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
                // Each outcome is moved out and emitted, and what `emit` hands back of a helper's
                // goes back in its place: the batch keeps the last reference to what the pipeline
                // lets go of, for a helper to free (`freeOutcomes`). This thread's own are freed here.
                let own = decodedHere & (1 << UInt64(chunk)) != 0
                for index in lines(of: chunk) {
                    let slot = outcomes.baseAddress! + index
                    let (going, left) = emit(index, slot.move())
                    if own {
                        slot.initialize(to: .blank)
                        _ = consume left
                    } else {
                        slot.initialize(to: left)
                    }
                    if !going {
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
