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
    /// Each partition's results not passed on, in the order it emitted them, from `heads`, and
    /// their places (`places[p][i]` is the place of `values[p][i]`).
    private var values: [[Value]]
    private var places: [[ResultPlace]]
    private var heads: [Int]
    /// The place of each partition's first held result (meaningless where `holding` is false):
    /// kept side by side, so finding the next result reads one small array.
    private var firstPlaces: [ResultPlace]
    private var holding: [Bool]
    /// How far each partition has done the stream's clock (`Int64.min` before its first batch,
    /// `Int64.max` once it completed).
    private var done: [Int64]
    /// The lowest of `done`, kept so that a result is compared with one number.
    private var lowest = Int64.min

    init(partitions: Int) {
        values = Array(repeating: [], count: partitions)
        places = Array(repeating: [], count: partitions)
        heads = Array(repeating: 0, count: partitions)
        firstPlaces = Array(repeating: .last, count: partitions)
        holding = Array(repeating: false, count: partitions)
        done = Array(repeating: .min, count: partitions)
    }

    /// How many results wait.
    var count: Int { values.indices.reduce(0) { $0 + values[$1].count - heads[$1] } }

    /// Partition `partition` emitted `new` at `newPlaces` (one each), and has done the clock up to
    /// `mark` (nil: no news of it). The values are moved out of `new`, which is left holding nulls
    /// (its memory is freed where it was made; no reference count changes hands).
    mutating func add(
        _ new: inout [Value], at newPlaces: [ResultPlace], from partition: Int, doneUpTo mark: Int64?
    ) {
        if !new.isEmpty {
            new.withUnsafeMutableBufferPointer { moved in
                for index in moved.indices { values[partition].append((moved.baseAddress! + index).move()) }
                moved.baseAddress!.initialize(repeating: .null, count: moved.count)
            }
            places[partition].append(contentsOf: newPlaces.prefix(new.count))
            if newPlaces.count < new.count {
                places[partition].append(contentsOf: repeatElement(.last, count: new.count - newPlaces.count))
            }
            if !holding[partition] {
                holding[partition] = true
                firstPlaces[partition] = places[partition][heads[partition]]
            }
        }
        guard let mark, mark > done[partition] else { return }
        let wasLowest = done[partition] == lowest
        done[partition] = mark
        if wasLowest { lowest = done.min() ?? .max }
    }

    /// Partition `partition` completed: it emits nothing more.
    mutating func completed(_ partition: Int) {
        var none: [Value] = []
        add(&none, at: [], from: partition, doneUpTo: .max)
    }

    /// The partition whose first held result goes first (nil: none is held).
    private func first() -> Int? {
        var best: Int?
        for partition in holding.indices where holding[partition] {
            guard let current = best else {
                best = partition
                continue
            }
            if firstPlaces[partition] < firstPlaces[current] { best = partition }
        }
        return best
    }

    /// The results no partition can emit one before any more, in order, each with the partition
    /// that made it (moved out: the caller holds the only reference). Once every partition
    /// completed, all of them.
    mutating func released() -> [(partition: Int, value: Value)] {
        var released: [(partition: Int, value: Value)] = []
        while let partition = first() {
            guard firstPlaces[partition].end < lowest || lowest == .max else { break }
            let head = heads[partition]
            var value = Value.null
            swap(&value, &values[partition][head])
            released.append((partition, consume value))
            heads[partition] = head + 1
            if head + 1 == values[partition].count {
                values[partition].removeAll(keepingCapacity: true)
                places[partition].removeAll(keepingCapacity: true)
                heads[partition] = 0
                holding[partition] = false
                continue
            }
            if head + 1 >= 1024 && (head + 1) * 2 >= values[partition].count {
                values[partition].removeFirst(head + 1)
                places[partition].removeFirst(head + 1)
                heads[partition] = 0
            }
            firstPlaces[partition] = places[partition][heads[partition]]
        }
        return released
    }

    /// Every result held, in order, left held (for a checkpoint: the run that resumes emits them
    /// first).
    var heldInOrder: [Value] {
        values.indices.flatMap { partition in
            zip(places[partition][heads[partition]...], values[partition][heads[partition]...])
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
