import Foundation
import Reactive

/// Fencing by the lease's own clock: what a runner fetched of a partition reaches the pipeline
/// only while the runner is sure it still holds the partition's lease. A round that renewed the
/// leases vouches for them from the moment it started (the server's time to live starts later)
/// for two thirds of the lease timeout: rounds come every third, so a runner that keeps up never
/// meets the fence. A runner that stalled (SIGSTOP, a frozen VM) finds every lease stale when it
/// wakes, before its next round can say which it lost: what it fetched goes back to the stream
/// for the partition's new holder instead of being written by two runners.
final class LeaseFence: @unchecked Sendable {
    /// What may be done with a batch of a partition now.
    enum Verdict: Equatable {
        /// The lease is surely held: deliver it.
        case deliver
        /// The lease may have expired (no round vouched for it lately): give the batch back.
        case stale
        /// The partition is not held (lost, let go of, or never taken): give the batch back.
        case notHeld
    }

    private let lock = NSLock()
    private let trustedFor: RxTimeInterval
    private var held: Set<Int> = []
    private var vouchedAt: RxTime?

    /// A fence for leases of `leaseTimeout`.
    init(leaseTimeout: RxTimeInterval) {
        trustedFor = leaseTimeout * 2 / 3
    }

    /// A round that started at `startedAt` renewed or took exactly the partitions `held`.
    func vouch(for held: Set<Int>, roundStartedAt startedAt: RxTime) {
        lock.withLock {
            self.held = held
            vouchedAt = startedAt
        }
    }

    /// What to do with a batch of `partition` at `now`.
    func verdict(_ partition: Int, at now: RxTime) -> Verdict {
        lock.withLock {
            guard held.contains(partition), let vouchedAt else { return .notHeld }
            return now - vouchedAt < trustedFor ? .deliver : .stale
        }
    }
}

/// The fence one partition's reader delivers behind: its verdict is asked on the pipeline's
/// thread before each batch; `fenced` is told (once) when a batch was given back, and
/// `deliveriesLost` when the reader stopped at deliveries of its consumer that never arrived.
struct PartitionFence: Sendable {
    let fence: LeaseFence
    let partition: Int
    let fenced: @Sendable () -> Void
    let deliveriesLost: @Sendable (ClosedRange<UInt64>) -> Void
}
