import Synchronization

/// Each partition's event-time watermark as this runner's `eventTime` last saw it, published every
/// second from the pipeline's thread and read on the lease thread of a runner group's source,
/// which keeps it with the runner's entry for `rivulet partitions`.
final class PartitionWatermarks: Sendable {
    private let marks = Mutex<[Int: Int64]>([:])

    /// Records the watermarks of these partitions (a partition without one yet is left out).
    func publish(_ watermarks: [(partition: Int, watermark: Int64?)]) {
        marks.withLock { marks in
            for (partition, watermark) in watermarks {
                if let watermark { marks[partition] = watermark }
            }
        }
    }

    /// The watermarks known of `partitions`.
    func watermarks(of partitions: [Int]) -> [Int: Int64] {
        marks.withLock { marks in marks.filter { partitions.contains($0.key) } }
    }
}
