import Pipeline
import Reactive

/// Where one result of a split `aggregate` goes among all partitions' results: the order the
/// operator gives on one thread. Windows come in the order of their ends; within a window, keys
/// by their earliest time (0 off event time), then by when that element came into the stream.
struct ResultPlace: Comparable, Sendable {
    /// The end of the result's window in milliseconds of the clock (`Int64.max` without windows).
    var end: Int64
    /// Its key's earliest time in the window (0 when elements come in time order).
    var time: Int64
    /// The stream-wide number of the element that put the key there (see `PartitionOrder`).
    var sequence: Int64

    static func < (a: ResultPlace, b: ResultPlace) -> Bool {
        (a.end, a.time, a.sequence) < (b.end, b.time, b.sequence)
    }

    /// After every placed one: what an operator emitted without a place waits for the end.
    static let last = ResultPlace(end: .max, time: .max, sequence: .max)
}

/// A partition's link between its lane and the `aggregate` it feeds, on the partition's thread:
/// the lane says which element of the stream is being delivered, the aggregate says where the
/// object it emits goes. Found by the aggregate as a service of its chain; present only where
/// `partitionBy` puts the partitions' results back in the one-thread order.
final class PartitionOrder {
    /// The stream-wide number of the element being delivered now.
    @exclusivity(unchecked) var sequence: Int64 = 0
    /// The place of the object being emitted now; taken (and cleared) by the lane's outbox.
    @exclusivity(unchecked) var place: ResultPlace?

    init() {}
}

/// What partitions on threads emitted, put back in the order the operator gives on one thread (a
/// pure state machine, on the pipeline's thread): each result waits until no partition can still
/// emit one before it. A partition that has done the stream's clock up to `mark` has emitted
/// every window that ends before it; the others are held. Each partition emits its results in
/// order (windows by their end, each window's keys by place), so the held ones are merged, not
/// sorted: the next is the least of the partitions' first.
struct OrderedResults {
    /// Each partition's results not passed on, in the order it emitted them, from `heads`.
    private var queues: [[(place: ResultPlace, value: Value)]]
    private var heads: [Int]
    /// How far each partition has done the stream's clock (`Int64.min` before its first batch,
    /// `Int64.max` once it completed).
    private var done: [Int64]
    /// The lowest of `done`, kept so that a result is compared with one number.
    private var lowest = Int64.min

    init(partitions: Int) {
        queues = Array(repeating: [], count: partitions)
        heads = Array(repeating: 0, count: partitions)
        done = Array(repeating: .min, count: partitions)
    }

    /// How many results wait.
    var count: Int { queues.indices.reduce(0) { $0 + queues[$1].count - heads[$1] } }

    /// Partition `partition` emitted `values` at `places` (one each), and has done the clock up to
    /// `mark` (nil: no news of it).
    mutating func add(_ values: [Value], at places: [ResultPlace], from partition: Int, doneUpTo mark: Int64?) {
        for (value, place) in zip(values, places) { queues[partition].append((place, value)) }
        guard let mark, mark > done[partition] else { return }
        let wasLowest = done[partition] == lowest
        done[partition] = mark
        if wasLowest { lowest = done.min() ?? .max }
    }

    /// Partition `partition` completed: it emits nothing more.
    mutating func completed(_ partition: Int) {
        add([], at: [], from: partition, doneUpTo: .max)
    }

    /// The partition whose first held result goes first (nil: none is held).
    private func first() -> Int? {
        var best: Int?
        for partition in queues.indices where heads[partition] < queues[partition].count {
            guard let current = best else {
                best = partition
                continue
            }
            if queues[partition][heads[partition]].place < queues[current][heads[current]].place { best = partition }
        }
        return best
    }

    /// The results no partition can emit one before any more, in order, each with the partition
    /// that made it. Once every partition completed, all of them.
    mutating func released() -> [(partition: Int, value: Value)] {
        var values: [(partition: Int, value: Value)] = []
        while let partition = first() {
            let head = heads[partition]
            guard queues[partition][head].place.end < lowest || lowest == .max else { break }
            values.append((partition, queues[partition][head].value))
            heads[partition] = head + 1
            if head + 1 == queues[partition].count {
                queues[partition].removeAll(keepingCapacity: true)
                heads[partition] = 0
            } else if head + 1 >= 1024 && (head + 1) * 2 >= queues[partition].count {
                queues[partition].removeFirst(head + 1)
                heads[partition] = 0
            }
        }
        return values
    }

    /// Every result held, in order, left held (for a checkpoint: the run that resumes emits them
    /// first).
    var heldInOrder: [Value] {
        queues.indices.flatMap { queues[$0][heads[$0]...] }.sorted { $0.place < $1.place }.map(\.value)
    }
}
