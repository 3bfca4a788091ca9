import Foundation

/// The fetch thread's stop switch, safe to flip from the pipeline's thread before or after the
/// consumer exists.
final class NATSWorker: @unchecked Sendable {
    private let lock = NSCondition()
    private var consumer: NATSConsumer?
    private var stopped = false
    private var runOver = false
    private var done = false
    private var fetching = true
    private var retired = false

    /// Hands over the consumer; false if the run stopped meanwhile.
    func begin(_ consumer: NATSConsumer) -> Bool {
        lock.withLock {
            self.consumer = consumer
            return !stopped
        }
    }

    /// Whether the run asked the thread to stop.
    var isStopped: Bool { lock.withLock { stopped } }

    /// Waits `seconds` before the thread tries again, or less if the run stops meanwhile.
    func pause(seconds: Double) {
        lock.lock()
        defer { lock.unlock() }
        if !stopped { _ = lock.wait(until: Date(timeIntervalSinceNow: seconds)) }
    }

    /// Stops a partition's reader whose partition is read no more here, or read again from its
    /// stored state by another reader: what it fetched and has not delivered yet goes back.
    func retire() {
        lock.withLock { retired = true }
        stop()
    }

    /// Whether the reader was retired: its batches go back to the stream, not to the pipeline.
    var isRetired: Bool { lock.withLock { retired } }

    func stop() {
        let consumer = lock.withLock {
            stopped = true
            lock.broadcast()
            return self.consumer
        }
        consumer?.stop()
    }

    /// Waits until the consumer has no message in flight, or the run is over; then marks the
    /// thread done (its caller closes the connection right after).
    func waitUntilSettled(_ consumer: NATSConsumer) {
        lock.lock()
        while consumer.hasInFlight && !runOver {
            // The message a failing run failed on is dead-lettered after the fetching stopped.
            lock.unlock()
            consumer.publishPendingDeadLetters()
            consumer.keepHeldAlive()
            lock.lock()
            _ = lock.wait(until: Date(timeIntervalSinceNow: 0.05))
        }
        lock.unlock()
        consumer.publishPendingDeadLetters()
        // Before the connection closes: what its last pull requests still deliver goes back at
        // once (to the partition's next reader, or another runner of the consumer).
        consumer.letTheLastRequestLapse()
    }

    /// After the run: stops waiting for settlements and waits (up to 5 s) for the fetch thread
    /// to flush its acknowledgements and close.
    func finish() {
        stop()
        lock.lock()
        runOver = true
        lock.broadcast()
        let limit = Date(timeIntervalSinceNow: 5)
        while !done && lock.wait(until: limit) {}
        lock.unlock()
    }

    /// Stops the fetching and waits until every message fetched was settled and the thread has
    /// closed its connection (a partition handed over: the next holder starts after them), or
    /// until the run is over (`finish`).
    func stopAndWaitUntilDone() {
        stop()
        lock.lock()
        while !done { lock.wait() }
        lock.unlock()
    }

    /// The fetch thread has closed its connection.
    func markDone() {
        lock.lock()
        done = true
        fetching = false
        lock.broadcast()
        lock.unlock()
    }

    /// The fetch thread fetches no more: every batch it fetched is on its way to the pipeline.
    func markFetched() {
        lock.withLock {
            fetching = false
            lock.broadcast()
        }
    }

    /// Stops the fetching and waits until the thread fetches no more (what it fetched may still
    /// wait to be settled: a drained group's source then ends, and its operators let go).
    func stopAndWaitUntilFetched() {
        stop()
        lock.lock()
        while fetching { lock.wait() }
        lock.unlock()
    }
}
