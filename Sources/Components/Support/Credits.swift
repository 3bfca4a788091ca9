import Dispatch

extension DispatchSemaphore {
    /// A semaphore holding `count` credits that may be freed with credits still taken. libdispatch
    /// traps when a semaphore made with a value is freed below that value, which happens when
    /// what would have given credits back is let go of, never run (a reader's batches still
    /// queued when the run's clock is freed); one made with none and given its credits after has
    /// nothing to check.
    static func credits(_ count: Int) -> DispatchSemaphore {
        let semaphore = DispatchSemaphore(value: 0)
        for _ in 0..<count { semaphore.signal() }
        return semaphore
    }
}
