@_spi(Components) import Pipeline
@_spi(Components) import Reactive
import Synchronization

/// What a watched run shows of each partition of a `partitionBy` (`/metrics`, `/stats`, `top`):
/// the elements sent to it, how many of those wait on its thread (its lag), and the bytes of its
/// state (at each checkpoint under `--state`, else every second). The pipeline's thread counts
/// what it sends and a partition's thread what it has done, each in an atomic of its own, read
/// when the metrics are.
final class PartitionGauges: @unchecked Sendable {
    private let sentCounts: [Tally]
    private let doneCounts: [Tally]
    private let meter: ComponentMeter
    /// How to measure each partition's state without checkpoints (none with them): called on the
    /// partition's thread alone, which is why the class is only unchecked Sendable.
    private let measures: [() -> Int]

    /// Gauges for `partitions` partitions on `meter`; `onThreads` when they run on threads of
    /// their own (on the pipeline's thread an element is done as it is sent: no lag); `measures`,
    /// one a partition, what `startMeasuring` calls.
    init(meter: ComponentMeter, partitions: Int, onThreads: Bool, measures: [() -> Int] = []) {
        self.meter = meter
        self.measures = measures
        sentCounts = (0..<partitions).map { _ in Tally() }
        doneCounts = onThreads ? (0..<partitions).map { _ in Tally() } : []
        for partition in 0..<partitions {
            let label = ("partition", String(partition))
            let sent = sentCounts[partition]
            meter.gauge("partition_elements_total", label: label) { sent.value }
            guard onThreads else {
                meter.gauge("partition_lag", label: label) { 0 }
                continue
            }
            let done = doneCounts[partition]
            // Done first: what is done was sent before, so the difference is never below 0.
            meter.gauge("partition_lag", label: label) {
                let finished = done.value
                return max(0, sent.value - finished)
            }
        }
    }

    /// `count` elements went to `partition` (called on the pipeline's thread alone).
    func sent(_ count: Int, to partition: Int) { sentCounts[partition].add(count) }

    /// `partition` has done `count` more of the elements sent to it (called on its thread alone).
    func done(_ count: Int, by partition: Int) { doneCounts[partition].add(count) }

    /// Measures `partition`'s state every second on `clock` (the partition's own thread), until
    /// `lifetime` ends; nothing when it has no measure (under `--state` a checkpoint measures it).
    func startMeasuring(_ partition: Int, on clock: any SchedulerType, until lifetime: Lifetime) {
        guard measures.indices.contains(partition) else { return }
        let measure = measures[partition]
        let meter = meter
        let timer = clock.schedulePeriodic(startAfter: .seconds(1), period: .seconds(1)) {
            meter.gauge("partition_state_bytes", label: ("partition", String(partition)), measure())
        }
        lifetime.onDispose { timer.dispose() }
    }

    /// Sets each partition's `partition_state_bytes`: the JSON bytes, as a checkpoint stores them,
    /// of the states in `snapshot` whose keys are that partition's (`KEY [p3] ops#0 aggregate`
    /// under `keyPrefix` `KEY`). A partition with no state shows 0.
    func measureState(in snapshot: JSONObject, keyPrefix: String) {
        var bytes = Array(repeating: 0, count: sentCounts.count)
        let start = keyPrefix + " [p"
        var buffer: [UInt8] = []
        for (key, value) in snapshot where key.hasPrefix(start) {
            let rest = key.dropFirst(start.count)
            guard let close = rest.firstIndex(of: "]"), let partition = Int(rest[..<close]),
                bytes.indices.contains(partition)
            else { continue }
            buffer.removeAll(keepingCapacity: true)
            JSONSerializer.write(value, to: &buffer)
            bytes[partition] += buffer.count
        }
        for (partition, size) in bytes.enumerated() {
            meter.gauge("partition_state_bytes", label: ("partition", String(partition)), size)
        }
    }

    /// A count one thread adds to and any reads: a relaxed load and store, no locked add.
    private final class Tally: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add(_ amount: Int) { count.store(count.load(ordering: .relaxed) &+ amount, ordering: .relaxed) }
    }
}
