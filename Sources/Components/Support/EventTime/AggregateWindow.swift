@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// One subscription of `aggregate`: its open windows (one, unless elements come as they come on
/// event time), where its clock's windows start, and the messages of what each window counted.
final class AggregateWindow {
    let fields: [AggregateField]
    /// Whether tables keep the event time of what they count (see `AggregateTable.ordersByTime`).
    let ordersByTime: Bool
    /// The open windows by number (start over the window length).
    private(set) var open: [Int64: AggregateTable] = [:]
    /// The earliest open window's number; nil while none is open.
    private(set) var earliest: Int64?
    /// The window the clock is armed for.
    var armedFor: Int64?
    /// The last window added to, and its table: most elements go to the same one as the last.
    private var last: (number: Int64, table: AggregateTable)?
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
    /// The pipeline-clock time windows are counted from (without `time`).
    var clockStart: RxTime { didSet { clockStartMilliseconds = clockStart.milliseconds } }
    /// `clockStart` in whole milliseconds (read per element on event time).
    private(set) var clockStartMilliseconds: Int64
    /// The origins of the elements counted in each open window.
    var held: [Int64: [Origin]] = [:]

    /// What the operator may hold, shared with its other copies; nil: no bound.
    let budget: AggregateBudget?

    /// Whether its tables keep each key's place among every partition's results.
    let sequenced: Bool

    init(
        fields: [AggregateField], now: RxTime, ordersByTime: Bool, sequenced: Bool = false,
        budget: AggregateBudget? = nil
    ) {
        self.fields = fields
        self.ordersByTime = ordersByTime
        self.sequenced = sequenced
        self.budget = budget
        clockStart = now
        clockStartMilliseconds = now.milliseconds
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
            earliest = Swift.min(earliest ?? number, number)
        }
        last = (number, table)
        return table
    }

    /// Closes window `number`, handing its table back; nil if it is not open.
    func close(_ number: Int64) -> AggregateTable? {
        guard let table = open.removeValue(forKey: number) else { return nil }
        budget?.windowsOpened(-1)
        if last?.number == number { last = nil }
        if earliest == number { earliest = open.keys.min() }
        return table
    }

    /// Takes back a table whose objects were emitted, to be filled again.
    func recycle(_ table: AggregateTable) {
        table.clear()
        spare = table
    }

    /// What a checkpoint keeps: the time since the clock's start (so a resumed run goes on as if
    /// no time had passed), the earliest open window's number and table, and any later ones.
    func saved(now: RxTime) -> Value {
        var object = JSONObject()
        object["elapsed"] = Value(stateDuration: now - clockStart)
        let numbers = open.keys.sorted()
        if let first = numbers.first, let table = open[first] {
            object["window"] = .int(Int(first))
            object["table"] = table.saved()
        }
        if numbers.count > 1 {
            object["later"] = .array(numbers.dropFirst().map { .array([.int(Int($0)), open[$0]!.saved()]) })
        }
        if !emitted.isEmpty {
            object["emitted"] = .array(
                emitted.sorted { $0.key < $1.key }.map { .array([.int(Int($0.key)), $0.value.saved()]) })
        }
        return .object(object)
    }

    /// Goes on from what `saved` kept.
    func restore(_ saved: Value, now: RxTime) {
        clockStart = now - (saved["elapsed"]?.stateDuration ?? .zero)
        if let number = saved["window"]?.intValue, let table = saved["table"] {
            self.table(Int64(number)).restore(table)
        }
        for entry in saved["later"]?.arrayValue ?? [] {
            guard let pair = entry.arrayValue, pair.count == 2, let number = pair[0].intValue else { continue }
            self.table(Int64(number)).restore(pair[1])
        }
        for entry in saved["emitted"]?.arrayValue ?? [] {
            guard let pair = entry.arrayValue, pair.count == 2, let number = pair[0].intValue else { continue }
            let kept = AggregateTable(fields: fields, ordersByTime: ordersByTime, budget: budget)
            kept.restore(pair[1])
            keepEmitted(Int64(number), kept)
        }
    }
}
