@_spi(Components) import Pipeline
@_spi(Components) import Reactive
import Synchronization

/// What one `aggregate` may hold at once, over every table of every copy of it (the partitions it
/// is split into, on whatever threads): keys, and about how many bytes they take. A table reserves
/// a key's share when it takes the key, and gives all of its shares back when it is emptied or
/// freed, so the bounds hold for the operator as written, not for each partition.
final class AggregateBudget: EventTimeHolding {
    let maxKeys: Int
    let maxBytes: Int
    private let keys = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)
    /// Windows open in every copy (a window open in two partitions counts twice): what a watched
    /// run shows of an event-time stream's windows.
    private let windows = Atomic<Int>(0)

    init(maxKeys: Int, maxBytes: Int) {
        self.maxKeys = maxKeys
        self.maxBytes = maxBytes
    }

    /// The keys held now, and about how many bytes they take.
    var held: (keys: Int, bytes: Int) { (keys.load(ordering: .relaxed), bytes.load(ordering: .relaxed)) }

    /// How many windows its copies hold open now.
    var windowsOpen: Int { windows.load(ordering: .relaxed) }

    /// How many keys its copies hold now.
    var keysHeld: Int { keys.load(ordering: .relaxed) }

    /// Counts windows opened (`count` > 0) or closed (`count` < 0) by one copy.
    func windowsOpened(_ count: Int) {
        windows.add(count, ordering: .relaxed)
    }

    /// Reserves one key of about `cost` bytes; nil when that is within both bounds, else why not
    /// (nothing is then reserved).
    func reserve(cost: Int) -> String? {
        let keysAfter = keys.add(1, ordering: .relaxed).newValue
        let bytesAfter = bytes.add(cost, ordering: .relaxed).newValue
        guard keysAfter > maxKeys || bytesAfter > maxBytes else { return nil }
        release(keys: 1, bytes: cost)
        if keysAfter > maxKeys { return "it holds \(maxKeys) keys already (maxKeys)" }
        return "its keys take about \(maxBytes >> 20) MiB already (maxMemoryMiB)"
    }

    /// Reserves keys that are there already (a table restored from a checkpoint), whatever the bounds.
    func force(keys count: Int, bytes cost: Int) {
        keys.add(count, ordering: .relaxed)
        bytes.add(cost, ordering: .relaxed)
    }

    /// Gives back `count` keys of `cost` bytes in all.
    func release(keys count: Int, bytes cost: Int) {
        guard count > 0 || cost > 0 else { return }
        keys.subtract(count, ordering: .relaxed)
        bytes.subtract(cost, ordering: .relaxed)
    }

    /// About what a key takes in a table of `fields` fields: its value (kept twice: the key and
    /// the index by its text), a row of accumulators, and the index's entry.
    static func cost(of key: Value, fields: Int) -> Int {
        let text: Int
        switch key {
        case .string(let string): text = string.utf8.count
        case .array, .object: text = key.description.utf8.count
        default: text = 8
        }
        return 2 * text + 128 + 64 * fields
    }
}

/// The budgets of a pipeline's aggregates, by where each is written: every copy of one aggregate
/// (a partition of `partitionBy`, of the default split) shares its budget.
final class AggregateBudgets: Sendable {
    private let budgets = Mutex<[String: AggregateBudget]>([:])

    /// The budget of the aggregate written at `location`, made with these bounds the first time.
    func budget(for location: SourceLocation, maxKeys: Int, maxBytes: Int) -> AggregateBudget {
        budgets.withLock { budgets in
            if let known = budgets[location.description] { return known }
            let made = AggregateBudget(maxKeys: maxKeys, maxBytes: maxBytes)
            budgets[location.description] = made
            return made
        }
    }
}
