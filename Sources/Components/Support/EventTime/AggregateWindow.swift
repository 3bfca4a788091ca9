@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// The tables of one subscription of `aggregate`, by window number: the open windows' (one, unless
/// elements come as they come on event time) and, with allowedLateness, the emitted ones late
/// elements may still update. The runtime's `aggregate` decides which window is which.
final class AggregateWindow {
    let fields: [AggregateField]
    /// Whether tables keep the event time of what they count (see `AggregateTable.ordersByTime`).
    let ordersByTime: Bool
    /// The open windows by number (start over the window length).
    private(set) var open: [Int64: AggregateTable] = [:]
    /// The last window added to, and its table: most elements go to the same one as the last.
    private var last: (number: Int64, table: AggregateTable)?
    /// `last`, unretained (`open` holds it): read for every element, where a retain and a
    /// release of the table would cost more than the lookup.
    private var lastNumber = Int64.min
    private var lastTable: Unmanaged<AggregateTable>?
    /// A table emptied, kept to be filled again (its storage stays allocated).
    private var spare: AggregateTable?
    /// With allowedLateness: the windows emitted that late elements may still update, by number.
    /// Set through `keepEmitted`, so that `forgetEmitted` finds the expired ones without a scan.
    private(set) var emitted: [Int64: AggregateTable] = [:]
    /// The numbers of `emitted`, earliest first (a number may be in twice; a stale one is skipped).
    private var emittedOrder = PriorityQueue<Int64>(by: <)

    /// Keeps `table` as window `number`'s, emitted, for late elements.
    func keepEmitted(_ number: Int64, _ table: AggregateTable) {
        if emitted.updateValue(table, forKey: number) == nil { emittedOrder.push(number) }
    }

    /// Forgets the emitted windows numbered below `number` (those no late element may update any
    /// more): from the earliest, so each is looked at once however many are kept.
    func forgetEmitted(before number: Int64) {
        while let first = emittedOrder.first, first < number {
            _ = emittedOrder.popFirst()
            emitted[first] = nil
        }
    }

    /// What the operator may hold, shared with its other copies; nil: no bound.
    let budget: AggregateBudget?

    /// Whether its tables keep each key's place among every partition's results.
    let sequenced: Bool

    init(fields: [AggregateField], ordersByTime: Bool, sequenced: Bool = false, budget: AggregateBudget? = nil) {
        self.fields = fields
        self.ordersByTime = ordersByTime
        self.sequenced = sequenced
        self.budget = budget
    }

    // A copy that ends with windows open (its partition lost) no longer holds them.
    deinit { budget?.windowsOpened(-open.count) }

    /// An empty table for these fields.
    func makeTable() -> AggregateTable {
        if let spare {
            self.spare = nil
            return spare
        }
        return AggregateTable(fields: fields, ordersByTime: ordersByTime, sequenced: sequenced, budget: budget)
    }

    /// The table of window `number`, opened if it is not.
    func table(_ number: Int64) -> AggregateTable {
        if let last, last.number == number { return last.table }
        let table: AggregateTable
        if let existing = open[number] {
            table = existing
        } else {
            table = makeTable()
            open[number] = table
            budget?.windowsOpened(1)
        }
        last = (number, table)
        (lastNumber, lastTable) = (number, .passUnretained(table))
        return table
    }

    /// Calls `body` with window `number`'s table (opened if it is not), borrowed.
    @inline(__always)
    func withTable<R>(_ number: Int64, _ body: (AggregateTable) throws -> R) rethrows -> R {
        if number == lastNumber, let table = lastTable { return try table._withUnsafeGuaranteedRef(body) }
        return try body(table(number))
    }

    /// Closes window `number`, handing its table back; nil if it is not open.
    func close(_ number: Int64) -> AggregateTable? {
        guard let table = open.removeValue(forKey: number) else { return nil }
        budget?.windowsOpened(-1)
        if last?.number == number { (last, lastTable) = (nil, nil) }
        return table
    }

    /// Takes back a table whose objects were emitted, to be filled again.
    func recycle(_ table: AggregateTable) {
        table.clear()
        spare = table
    }

    /// What a checkpoint keeps of the tables (after the operator's `elapsed`): the earliest open
    /// window's number and table, any later ones, and the emitted ones kept for late elements.
    func saved() -> [(String, Value)] {
        var fields: [(String, Value)] = []
        let numbers = open.keys.sorted()
        if let first = numbers.first, let table = open[first] {
            fields.append(("window", .int(Int(first))))
            fields.append(("table", table.saved()))
        }
        if numbers.count > 1 {
            fields.append(("later", .array(numbers.dropFirst().map { .array([.int(Int($0)), open[$0]!.saved()]) })))
        }
        if !emitted.isEmpty {
            fields.append(
                (
                    "emitted",
                    .array(emitted.sorted { $0.key < $1.key }.map { .array([.int(Int($0.key)), $0.value.saved()]) })
                ))
        }
        return fields
    }

    /// Goes on from what `saved` kept; the open windows' numbers.
    func restore(_ saved: Value) -> [Int64] {
        var opened: [Int64] = []
        if let number = saved["window"]?.intValue, let table = saved["table"] {
            self.table(Int64(number)).restore(table)
            opened.append(Int64(number))
        }
        for entry in saved["later"]?.arrayValue ?? [] {
            guard let pair = entry.arrayValue, pair.count == 2, let number = pair[0].intValue else { continue }
            self.table(Int64(number)).restore(pair[1])
            opened.append(Int64(number))
        }
        for entry in saved["emitted"]?.arrayValue ?? [] {
            guard let pair = entry.arrayValue, pair.count == 2, let number = pair[0].intValue else { continue }
            let kept = AggregateTable(fields: fields, ordersByTime: ordersByTime, budget: budget)
            kept.restore(pair[1])
            keepEmitted(Int64(number), kept)
        }
        return opened
    }
}
