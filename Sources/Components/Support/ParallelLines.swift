import Dispatch
@_spi(Host) import Pipeline
import Reactive
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
        case malformed(JSONError)
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

    /// The workers' steps of `stretch`, made once a subscription.
    struct Workers {
        let steps: [ElementStep]
        let dropped: (Int) -> Void

        init(_ stretch: ParallelStretch) {
            steps = (0..<max(1, stretch.workers)).map { _ in stretch.makeStep() }
            dropped = stretch.dropped
        }
    }

    /// Reads `reader` to its end, emitting what the stretch gives for each line in order; stops
    /// at the first error (an operator's, a read error worded by `failure`, a malformed line —
    /// `WHAT line N: …` — unless the source's `onError` skips or reports it) and returns it.
    /// `advanced` gets the reader's offset after each buffer.
    static func read(
        _ reader: LineReader, workers: Workers, emit: (Value) -> Void, isLive: () -> Bool,
        advanced: (Int) -> Void, context: ComponentContext, what: String, failure: (any Error) -> any Error
    ) -> Ending {
        var failed: (any Error)?
        while isLive() {
            let firstLine = reader.lineNumber + 1
            let ended: Bool?
            do {
                ended = try reader.nextLines(limit: batchLimit) { bytes, ranges -> Bool in
                    var dropped = 0
                    defer { workers.dropped(dropped) }
                    return Batch(bytes: bytes, ranges: ranges, steps: workers.steps).run { index, outcome in
                        if !isLive() { return false }
                        switch outcome {
                        case .blank: return true
                        case .dropped: dropped += 1
                        case .value(let value): emit(value)
                        case .failed(let error):
                            failed = error
                            return false
                        case .malformed(let error):
                            let problem = context.error("\(what) line \(firstLine + index): \(error)")
                            let text = String(decoding: bytes[ranges[index]], as: UTF8.self)
                            do { try context.elementFailed(problem, element: .string(text)) } catch {
                                failed = problem
                                return false
                            }
                        }
                        return true
                    }
                }
            } catch {
                return .failed(failure(error))
            }
            guard let ended else { return .exhausted }
            if let failed { return .failed(failed) }
            if ended { return .stopped }
            advanced(reader.offset)
        }
        return .stopped
    }

    /// One buffer of lines, cut in chunks that helper threads and the pipeline's thread decode,
    /// while the pipeline's thread hands out each chunk's outcomes in order as soon as it is done,
    /// decoding a chunk itself whenever the next one in order is not ready yet.
    final class Batch: @unchecked Sendable {
        let bytes: UnsafeBufferPointer<UInt8>
        let ranges: [Range<Int>]
        let steps: [ElementStep]
        let chunkCount: Int
        /// Lines a chunk: at least 256, and no more than 64 chunks (a bit each in `finished`).
        let chunkLines: Int
        let outcomes: UnsafeMutableBufferPointer<Outcome>
        private let nextChunk = Atomic<Int>(0)
        private let finished = Atomic<UInt64>(0)

        init(bytes: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>], steps: [ElementStep]) {
            self.bytes = bytes
            self.ranges = ranges
            self.steps = steps
            chunkLines = max(256, (ranges.count + 63) / 64)
            chunkCount = (ranges.count + chunkLines - 1) / chunkLines
            outcomes = .allocate(capacity: ranges.count)
            outcomes.initialize(repeating: .blank)
        }

        deinit {
            outcomes.deinitialize()
            outcomes.deallocate()
        }

        private func claim() -> Int? {
            let chunk = nextChunk.wrappingAdd(1, ordering: .relaxed).oldValue
            return chunk < chunkCount ? chunk : nil
        }

        private func isFinished(_ chunk: Int) -> Bool {
            finished.load(ordering: .acquiring) & (1 << UInt64(chunk)) != 0
        }

        private func decode(_ chunk: Int, with step: ElementStep) {
            let upper = min(ranges.count, (chunk + 1) * chunkLines)
            for index in (chunk * chunkLines)..<upper {
                outcomes[index] = ParallelLines.outcome(bytes, ranges[index], step)
            }
            finished.bitwiseOr(1 << UInt64(chunk), ordering: .releasing)
        }

        /// Calls `emit` with each line's outcome in order until it returns false (then true is
        /// returned: the stream ended); returns only once no helper touches the buffer any more.
        func run(_ emit: (Int, Outcome) -> Bool) -> Bool {
            for worker in 1..<max(1, min(steps.count, chunkCount)) {
                nonisolated(unsafe) let step = steps[worker]
                DispatchQueue.global().async {
                    while let chunk = self.claim() { self.decode(chunk, with: step) }
                }
            }
            var stopped = false
            chunks: for chunk in 0..<chunkCount {
                while !isFinished(chunk) {
                    if let other = claim() { decode(other, with: steps[0]) } else { sched_yield() }
                }
                let upper = min(ranges.count, (chunk + 1) * chunkLines)
                for index in (chunk * chunkLines)..<upper {
                    // Moved out rather than copied: one retain and release less an element.
                    let slot = outcomes.baseAddress! + index
                    let outcome = slot.move()
                    slot.initialize(to: .blank)
                    if !emit(index, outcome) {
                        stopped = true
                        break chunks
                    }
                }
            }
            if stopped {
                // What no helper has started is claimed and left; what one has, waited for.
                while let chunk = claim() { finished.bitwiseOr(1 << UInt64(chunk), ordering: .relaxed) }
                let all: UInt64 = chunkCount == 64 ? ~0 : (1 << UInt64(chunkCount)) - 1
                while finished.load(ordering: .acquiring) != all { sched_yield() }
            }
            return stopped
        }
    }

    static func outcome(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ step: ElementStep) -> Outcome {
        let line = UnsafeBufferPointer(rebasing: bytes[range])
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .blank }
        let value: Value
        do throws(JSONError) {
            value = try JSONParser.parseOnDemand(line)
        } catch {
            return .malformed(error)
        }
        do {
            guard let result = try step(value) else { return .dropped }
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
