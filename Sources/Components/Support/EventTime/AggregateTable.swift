@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// The accumulators of one window, per key, in the order the keys came.
final class AggregateTable {
    let fields: [AggregateField]
    /// Whether elements come out of time order and the table is to give what elements in time
    /// order would give (`aggregate` right behind `eventTime`): keys in the order of their earliest
    /// time, and `first`, `last` and ties of `min`, `max` by time. Elements that come in the same
    /// millisecond count in the order they came, as they would have waited.
    let ordersByTime: Bool
    // Read and written for every element, on the pipeline's thread only: unchecked, as a dynamic
    // exclusivity check costs a thread-local lookup each time.
    @exclusivity(unchecked) private var rowsByKey = KeyRows()
    @exclusivity(unchecked) private var keys: [Value] = []
    @exclusivity(unchecked) private var counts = AggregateColumn<Int>()
    /// One running value per field per key, row after row (`row * fields.count + column`): sums
    /// and avg totals as numbers, extremes and firsts as values. Flat, so that an update is one
    /// store, not a nested array's uniqueness check.
    @exclusivity(unchecked) private var numbers = AggregateColumn<Double>()
    @exclusivity(unchecked) private var seen = AggregateColumn<Int>()
    @exclusivity(unchecked) private var values: [Value] = []
    /// The fields' values of the element being added (kept, so no array is made per element).
    @exclusivity(unchecked) private var evaluated: [Value?]
    /// The number of each `sum` and `avg` field of the element being added, when it has one (no
    /// value is kept for those: only the number counts).
    @exclusivity(unchecked) private var evaluatedNumbers: AggregateColumn<Double>
    @exclusivity(unchecked) private var hasNumber: AggregateColumn<Bool>
    /// With `ordersByTime`: each key's earliest time and when that element came (how many came
    /// before it), and the time of each cell's value.
    @exclusivity(unchecked) private var firstTimes = AggregateColumn<Int64>()
    @exclusivity(unchecked) private var firstArrivals = AggregateColumn<Int>()
    @exclusivity(unchecked) private var arrivals = 0
    @exclusivity(unchecked) private var cellTimes = AggregateColumn<Int64>()
    /// Whether each key's place among every partition's results is kept (`PartitionOrder`): the
    /// stream-wide number of the element that put it first.
    let sequenced: Bool
    @exclusivity(unchecked) private var firstSequences = AggregateColumn<Int64>()

    /// Each field's kind and expression (a constant for `count`), apart, to be read in place.
    private let kinds: [AggregateField.Kind]
    private let expressions: [Expression]
    private let hasExpression: [Bool]
    /// The member each plain `.name` field reads, copied for this table: read straight from an
    /// object, no expression is called or copied per element. (An expression's parts are shared by
    /// every partition's table, and counting references to them from several threads at once
    /// costs each a cache miss.)
    private let fieldNames: [String?]

    /// The members of the objects of a keyed and of an unkeyed aggregate.
    private let keyedLayout: OutputLayout
    private let plainLayout: OutputLayout
    /// Room for the text of the row being made, kept from row to row.
    private var rowText: [UInt8] = []

    /// The operator's bounds on keys and bytes, shared with its other tables and copies; nil:
    /// only `maxKeys` of `add`, for this table.
    private let budget: AggregateBudget?
    /// What this table reserved of `budget`: about the bytes of its keys.
    private var reservedBytes = 0

    init(fields: [AggregateField], ordersByTime: Bool = false, sequenced: Bool = false, budget: AggregateBudget? = nil)
    {
        self.budget = budget
        self.sequenced = sequenced
        self.fields = fields
        kinds = fields.map(\.kind)
        expressions = fields.map { $0.expression ?? Expression(constant: .null) }
        hasExpression = fields.map { $0.expression != nil }
        fieldNames = fields.map { field in
            field.expression?.fieldName.map { String(decoding: Array($0.utf8), as: UTF8.self) }
        }
        self.ordersByTime = ordersByTime
        evaluated = Array(repeating: nil, count: fields.count)
        evaluatedNumbers = AggregateColumn(repeating: 0, count: fields.count)
        hasNumber = AggregateColumn(repeating: false, count: fields.count)
        keyedLayout = OutputLayout(fields: fields, keyed: true)
        plainLayout = OutputLayout(fields: fields, keyed: false)
    }

    /// Counts `element` under its key (`keyExpression` on it); `time` is its event time when the
    /// table `ordersByTime`, `sequence` its number in the stream when the table is `sequenced`.
    func add(
        _ element: Value, keyedBy keyExpression: Expression, scope: EvaluationScope, context: ComponentContext,
        maxKeys: Int = .max, time: Int64? = nil, sequence: Int64 = 0
    ) throws {
        // The key's row: by the key's text where it lies in the line when it is plain text there
        // (most elements, and no string made), else by the key's value. The lookup's result is
        // coded as an integer (the row; -1: no row yet; -2: look the key up as a value), for the
        // non-generic `withFieldText`: a generic result goes through value witnesses per element.
        var key: Value?
        var found: Int?
        let coded =
            keyExpression.withFieldText(of: element) { text -> Int in
                guard let row = rowsByKey.row(ofText: text) else { return -2 }
                return row ?? -1
            } ?? -2
        if coded >= 0 {
            found = coded
        } else if coded == -2 {
            let value = try context.evaluate(keyExpression, element, in: scope)
            found = rowsByKey.row(of: value)
            key = value
        }
        try evaluateFields(of: element, scope: scope, context: context)
        let row: Int
        if let found {
            row = found
        } else {
            // A new key: its value is made now (once a key a window).
            row = try newRow(
                for: key ?? context.evaluate(keyExpression, element, in: scope), of: element, context: context,
                maxKeys: maxKeys, time: time, sequence: sequence)
        }
        // Earlier than what was counted (it came later): it goes before, as it would have come.
        let at = ordersByTime ? (time ?? .max) : 0
        if ordersByTime {
            if at < firstTimes[row] {
                (firstTimes[row], firstArrivals[row]) = (at, arrivals)
                if sequenced && row < firstSequences.count { firstSequences[row] = sequence }
            }
            arrivals += 1
        }
        counts[row] += 1
        accumulate(into: row, at: at)
    }

    /// Works out every field of `element` into `evaluated`, before anything changes, so an element
    /// that fails leaves the table as it was (onError may drop it and go on).
    @inline(__always)
    private func evaluateFields(of element: Value, scope: EvaluationScope, context: ComponentContext) throws {
        let width = fields.count
        // The expressions are read in place: copying a field (or an Expression, which the
        // array's subscript does) per element costs a retain and a release of each of its parts.
        try expressions.withUnsafeBufferPointer { expressions in
            for column in 0..<width {
                // Every cell of the last element is set again (it may have failed half-way).
                hasNumber[column] = false
                guard hasExpression[column] else {
                    if evaluated[column] != nil { evaluated[column] = nil }
                    continue
                }
                let kind = kinds[column]
                let countsNumbers = kind == .sum || kind == .avg
                // A sum's integer read where it lies in the line: no value made (what evaluating
                // gives is `.int` of the same, whose doubleValue this is).
                if countsNumbers, let name = fieldNames[column],
                    let integer = Expression.fieldInteger(named: name, of: element)
                {
                    (evaluatedNumbers[column], hasNumber[column]) = (Double(integer), true)
                    continue
                }
                let value: Value
                if let name = fieldNames[column], case .object(let object) = element {
                    value = object[name] ?? .null
                } else {
                    value = try context.evaluate(expressions[column], element, in: scope)
                }
                switch kind {
                case .sum, .avg, .min, .max:
                    if case .null = value {
                        evaluated[column] = nil
                        continue
                    }
                    guard let number = value.doubleValue else {
                        throw context.error(
                            "aggregate: \(kind.rawValue) of '\(fields[column].name)' needs numbers, got \(value)",
                            element: element)
                    }
                    if countsNumbers {
                        (evaluatedNumbers[column], hasNumber[column]) = (number, true)
                        continue
                    }
                default: break
                }
                evaluated[column] = value
            }
        }
    }

    /// A row for `key`, new in this table, within the bounds on keys; its number.
    private func newRow(
        for key: Value, of element: Value, context: ComponentContext, maxKeys: Int, time: Int64?, sequence: Int64
    ) throws -> Int {
        let width = fields.count
        // A bound on memory, for the operator (every window and partition): past it, an
        // element error.
        if let budget {
            let cost = AggregateBudget.cost(of: key, fields: width)
            if let refusal = budget.reserve(cost: cost) {
                var shown = key.description
                if shown.count > 40 { shown = String(shown.prefix(37)) + "..." }
                throw context.error(
                    "\(refusal); key \(shown) is one more — raise it or group by a coarser key",
                    element: element)
            }
            reservedBytes += cost
        } else if keys.count >= maxKeys {
            throw context.error(
                "aggregate: a window holds \(maxKeys) keys already (maxKeys); key \(key) is one more — raise "
                    + "maxKeys or group by a coarser key", element: element)
        }
        let row = keys.count
        rowsByKey.set(key, row: row)
        keys.append(key)
        counts.append(0)
        numbers.append(0, times: width)
        seen.append(0, times: width)
        values.append(contentsOf: repeatElement(.null, count: width))
        if sequenced {
            // Rows restored from a checkpoint have no number: they go first.
            if firstSequences.count < row { firstSequences.append(0, times: row - firstSequences.count) }
            firstSequences.append(sequence)
        }
        if ordersByTime {
            firstTimes.append(time ?? 0)
            firstArrivals.append(arrivals)
            cellTimes.append(time ?? 0, times: width)
        }
        return row
    }

    /// Counts the fields in `evaluated` into `row`'s cells; `at` is the element's time when the
    /// table `ordersByTime`.
    @inline(__always)
    private func accumulate(into row: Int, at: Int64) {
        let width = fields.count
        for column in 0..<width {
            let cell = row * width + column
            if hasNumber[column] {
                hasNumber[column] = false
                numbers[cell] += evaluatedNumbers[column]
                seen[cell] += 1
                continue
            }
            guard let value = evaluated[column] else { continue }
            evaluated[column] = nil
            let kind = kinds[column]
            // Without ordersByTime every time is 0: arrival order decides, as it is time order.
            let first = seen[cell] == 0
            let before = ordersByTime && at < cellTimes[cell]
            switch kind {
            case .count: break
            case .first:
                if first || before {
                    values[cell] = value
                    if ordersByTime { cellTimes[cell] = at }
                }
            case .last:
                if first || !ordersByTime || at >= cellTimes[cell] { values[cell] = value }
                if ordersByTime && (first || at >= cellTimes[cell]) { cellTimes[cell] = at }
            case .sum, .avg, .min, .max:
                guard let number = value.doubleValue else { continue }  // null: checked above
                switch kind {
                case .min:
                    if first || number < numbers[cell] || (before && number == numbers[cell]) {
                        (numbers[cell], values[cell]) = (number, value)
                        if ordersByTime { cellTimes[cell] = at }
                    }
                case .max:
                    if first || number > numbers[cell] || (before && number == numbers[cell]) {
                        (numbers[cell], values[cell]) = (number, value)
                        if ordersByTime { cellTimes[cell] = at }
                    }
                default: numbers[cell] += number
                }
            }
            seen[cell] += 1
        }
    }

    /// One object per key, in the order the keys came, and an empty table.
    func drain(start: Int64, keyed: Bool) -> [Value] {
        defer { clear() }
        return rows(start: start, keyed: keyed)
    }

    /// The rows in the order their objects go: by earliest time, then as they came (a stable
    /// sort), the order of elements in time order.
    private var rowOrder: [Int] {
        ordersByTime
            ? keys.indices.sorted { (firstTimes[$0], firstArrivals[$0]) < (firstTimes[$1], firstArrivals[$1]) }
            : Array(keys.indices)
    }

    /// One object per key, in the order the keys came, each with its place among every
    /// partition's results (see `ResultPlace`) for a window ending at `end`.
    func placedRows(start: Int64, keyed: Bool, end: Int64) -> (rows: [Value], places: [ResultPlace]) {
        let order = rowOrder
        let places = order.map { row in
            ResultPlace(
                end: end, time: ordersByTime ? firstTimes[row] : 0,
                sequence: row < firstSequences.count ? firstSequences[row] : 0)
        }
        return (rows(start: start, keyed: keyed, order: order), places)
    }

    /// One object per key (or for `only` that key), in the order the keys came.
    func rows(start: Int64, keyed: Bool, only: Value? = nil) -> [Value] {
        rows(start: start, keyed: keyed, only: only, order: rowOrder)
    }

    private func rows(start: Int64, keyed: Bool, only: Value? = nil, order: [Int]) -> [Value] {
        var outputs: [Value] = []
        outputs.reserveCapacity(only == nil ? keys.count : 1)
        let layout = keyed ? keyedLayout : plainLayout
        for row in order where only == nil || only == keys[row] {
            var members = [Value](repeating: .null, count: layout.names.count)
            if let place = layout.keyPlace { members[place] = keys[row] }
            members[layout.startPlace] = .int(Int(start))
            for column in 0..<fields.count {
                let cell = row * fields.count + column
                let result: Value
                switch kinds[column] {
                case .count: result = .int(counts[row])
                case .sum: result = Self.number(numbers[cell])
                case .avg: result = seen[cell] == 0 ? .null : .double(numbers[cell] / Double(seen[cell]))
                case .min, .max, .first, .last: result = values[cell]
                }
                members[layout.fieldPlaces[column]] = result
            }
            // Written as its text here (on a partition's thread, when split), copied out by the sink.
            outputs.append(layout.objects.object(members, scratch: &rowText))
        }
        return outputs
    }

    deinit { budget?.release(keys: keys.count, bytes: reservedBytes) }

    /// Empties the table, giving back what it reserved.
    func clear() {
        budget?.release(keys: keys.count, bytes: reservedBytes)
        reservedBytes = 0
        rowsByKey.removeAll()
        keys.removeAll(keepingCapacity: true)
        counts.removeAll()
        numbers.removeAll()
        seen.removeAll()
        values.removeAll(keepingCapacity: true)
        firstTimes.removeAll()
        firstArrivals.removeAll()
        firstSequences.removeAll()
        arrivals = 0
        cellTimes.removeAll()
    }

    /// The table as a checkpoint keeps it: each key with its count and running values.
    func saved() -> Value {
        // Row by row, as nested arrays (the form checkpoints have always had).
        let width = fields.count
        func rows<Cell>(_ cells: [Cell], _ value: (Cell) -> Value) -> Value {
            .array(keys.indices.map { row in .array(cells[row * width..<(row + 1) * width].map(value)) })
        }
        var saved = JSONObject()
        saved["keys"] = .array(keys)
        saved["counts"] = .array(counts.array.map { .int($0) })
        saved["numbers"] = rows(numbers.array) { .double($0) }
        saved["seen"] = rows(seen.array) { .int($0) }
        saved["values"] = rows(values) { $0 }
        if ordersByTime {
            saved["firstTimes"] = .array(firstTimes.array.map { .int(Int($0)) })
            saved["firstArrivals"] = .array(firstArrivals.array.map { .int($0) })
            saved["arrivals"] = .int(arrivals)
            saved["cellTimes"] = rows(cellTimes.array) { .int(Int($0)) }
        }
        return .object(saved)
    }

    /// Takes back what `saved` kept (rows that do not have one entry per field are left out).
    func restore(_ saved: Value) {
        let savedKeys = saved["keys"]?.arrayValue ?? []
        let savedCounts = saved["counts"]?.arrayValue ?? []
        let savedNumbers = saved["numbers"]?.arrayValue ?? []
        let savedSeen = saved["seen"]?.arrayValue ?? []
        let savedValues = saved["values"]?.arrayValue ?? []
        let savedFirstTimes = saved["firstTimes"]?.arrayValue ?? []
        let savedCellTimes = saved["cellTimes"]?.arrayValue ?? []
        let savedFirstArrivals = saved["firstArrivals"]?.arrayValue ?? []
        if ordersByTime { arrivals = saved["arrivals"]?.intValue ?? savedKeys.count }
        for (row, key) in savedKeys.enumerated() {
            guard row < savedCounts.count, row < savedNumbers.count, row < savedSeen.count, row < savedValues.count,
                let count = savedCounts[row].intValue,
                let rowNumbers = savedNumbers[row].arrayValue?.compactMap(\.doubleValue),
                let rowSeen = savedSeen[row].arrayValue?.compactMap(\.intValue),
                let rowValues = savedValues[row].arrayValue,
                rowNumbers.count == fields.count, rowSeen.count == fields.count, rowValues.count == fields.count
            else { continue }
            rowsByKey.set(key, row: keys.count)
            keys.append(key)
            if let budget {
                // What a checkpoint held is held again, whatever the bounds say now.
                let cost = AggregateBudget.cost(of: key, fields: fields.count)
                budget.force(keys: 1, bytes: cost)
                reservedBytes += cost
            }
            counts.append(count)
            numbers.append(contentsOf: rowNumbers)
            seen.append(contentsOf: rowSeen)
            values.append(contentsOf: rowValues)
            if ordersByTime {
                // Times not kept (a checkpoint from before): counted before anything after it.
                func int(_ list: [Value], _ index: Int, else missing: Int) -> Int {
                    index < list.count ? list[index].intValue ?? missing : missing
                }
                let times = row < savedCellTimes.count ? savedCellTimes[row].arrayValue ?? [] : []
                firstTimes.append(Int64(int(savedFirstTimes, row, else: .min)))
                firstArrivals.append(int(savedFirstArrivals, row, else: row))
                cellTimes.append(contentsOf: (0..<fields.count).map { Int64(int(times, $0, else: .min)) })
            }
        }
    }

    private static func number(_ double: Double) -> Value {
        if let int = Int(exactly: double) { return .int(int) }
        return .double(double)
    }
}

/// The members of an aggregate's objects, in order: `key` (when keyed), `start`, then each field;
/// a field named as an earlier member takes that member's place (its value is the field's), as
/// setting the member again would.
private struct OutputLayout {
    let names: [String]
    /// How each row is made (as its text, when its values allow).
    let objects: ObjectLayout
    let keyPlace: Int?
    let startPlace: Int
    /// Where each field's value goes, by column.
    let fieldPlaces: [Int]

    init(fields: [AggregateField], keyed: Bool) {
        var names: [String] = []
        func place(_ name: String) -> Int {
            if let existing = names.firstIndex(of: name) { return existing }
            names.append(name)
            return names.count - 1
        }
        keyPlace = keyed ? place("key") : nil
        startPlace = place("start")
        fieldPlaces = fields.map { place($0.name) }
        self.names = names
        objects = ObjectLayout(names: names)
    }
}
