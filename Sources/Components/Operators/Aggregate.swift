@_spi(Host) import Pipeline
import Reactive

private enum Key {
    static let by = Parameter<Expression?>(
        "by", doc: "The key of the groups (default: one group of everything).", example: ".service")
    static let every = Parameter<RxTimeInterval?>(
        "every", doc: "Tumbling windows of this length (default: one window, to the end of the stream).",
        example: "1m"
    ).above(RxTimeInterval.zero)
    static let time = Parameter<Expression?>(
        "time", doc: "Event time in milliseconds, from the element (default: the pipeline's clock).", example: ".ts")
    static let allowedLateness = Parameter<RxTimeInterval?>(
        "allowedLateness",
        doc:
            "On event time: how long after a window was emitted a late element still updates it (emitted again, with update: true).",
        example: "1m"
    ).above(RxTimeInterval.zero)
    static let fields = Parameter<ParameterMap<Value>>(
        "fields",
        doc: "Output fields: count, or { sum | min | max | avg | first | last: EXPR }.",
        example: "{ errors: count, bytes: { sum: .bytes }, slowest: { max: .ms } }")
}

/// One output field of `aggregate`: what it computes, over what.
struct AggregateField {
    enum Kind: String, CaseIterable {
        case count, sum, min, max, avg, first, last
    }

    let name: String
    let kind: Kind
    let expression: Expression?

    /// A problem with the fields as written.
    struct Problem: Error {
        let message: String
    }

    /// The fields as written, or the problem with them.
    static func parse(_ pairs: [(key: String, value: Value)]) -> Result<[AggregateField], Problem> {
        var fields: [AggregateField] = []
        let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
        for (name, spec) in pairs {
            if case .string("count") = spec {
                fields.append(AggregateField(name: name, kind: .count, expression: nil))
                continue
            }
            guard case .object(let object) = spec, object.keys.count == 1, let kindName = object.keys.first,
                let kind = Kind(rawValue: kindName), kind != .count, case .string(let text)? = object[kindName]
            else {
                return .failure(Problem(message: "field '\(name)': write count, or one of { \(kinds): EXPR }"))
            }
            do {
                fields.append(AggregateField(name: name, kind: kind, expression: try Expression(text)))
            } catch {
                return .failure(Problem(message: "field '\(name)': invalid expression '\(text)': \(error.message)"))
            }
        }
        return fields.isEmpty
            ? .failure(Problem(message: "give at least one field, such as { count: count }")) : .success(fields)
    }
}

extension BuiltinComponents {
    /// `aggregate: {by: EXPR, every: 1m, fields: {...}}` — count, sum, min, max, avg, first, last per key per window.
    public static let aggregate = ComponentSpec(
        name: "aggregate",
        summary: "Counts, sums, averages, min, max, first and last per key per time window, one object each.",
        docs: """
            Elements are grouped by the key 'by' into tumbling windows of 'every' (aligned to the \
            subscription on the pipeline's clock, or, with 'time', to zero of the elements' own times in \
            milliseconds). When a window closes — at its end on the pipeline's clock, or, with 'time', when \
            an element of a later window arrives — one object per key is emitted, in the order the keys \
            came: {key, start (ms), ...fields}. With 'time', elements are expected in time order; a late \
            one counts in the current window. On an event-time stream (eventTime above it) windows are \
            aligned to the epoch and close when the watermark passes their end; with allowedLateness, an \
            element that comes behind the watermark by at most that much updates the window it belongs to \
            even after it was emitted, and that key's object is emitted again with update: true (an \
            sqlite sink with key [key, start] then replaces its row); later than that it is late as \
            eventTime says. Memory is one accumulator per field per key of the open window (and of the \
            windows still open to late elements). On completion the open window is emitted. sum, min, \
            max and avg take numbers; null is skipped.
            """,
        parameters: [Key.by, Key.every, Key.time, Key.allowedLateness, Key.fields],
        primary: Key.fields,
        example: """
            - aggregate:
                by: .service
                every: 1m
                fields: { errors: count, bytes: { sum: .bytes }, slowest: { max: .ms } }
            """,
        validate: { values, validation in
            if case .failure(let problem) = AggregateField.parse(values[Key.fields].pairs) {
                validation.error(problem.message, at: Key.fields, in: values)
            }
            if values.has(Key.allowedLateness) && !values.has(Key.every) {
                validation.error(
                    "allowedLateness needs every, the length of the windows", at: Key.allowedLateness, in: values)
            }
            if values.has(Key.time) && !values.has(Key.every) {
                validation.error("time needs every, the length of the windows", at: Key.time, in: values)
            } else if let time = values[Key.time] {
                validation.warning(
                    "'time' counts elements in the order they come: one out of order counts in the current window",
                    at: Key.time, in: values,
                    note: "for elements out of order, declare eventTime on the stream (eventTime: { time: "
                        + "\(time.source), maxDelay: 10s }) and leave 'time' out")
            }
        },
        checkpointing: .keepsState(
            "its open window: each key's accumulators and the time the window has left; after a durable source (nats), each checkpoint acknowledges the messages the window holds"
        ),
        elementErrors: true,
        factory: .operator { parameters, context in
            guard case .success(let fields) = AggregateField.parse(parameters[Key.fields].pairs) else {
                throw context.error("aggregate: invalid fields")
            }
            let by = parameters[Key.by]
            let every = parameters[Key.every]
            let time = parameters[Key.time]
            let scheduler = context.scheduler
            // Late elements reach it only on event time, from the clock's eventTime.
            let lateness = try parameters[Key.allowedLateness].map { lateness -> (EventTimeDomain, Int64) in
                guard let domain = context.existing(EventTimeDomain.self), domain.clock === scheduler as AnyObject
                else {
                    throw context.error(
                        "aggregate: allowedLateness is for an event-time stream; declare eventTime above it")
                }
                let milliseconds = lateness.totalNanoseconds / 1_000_000
                domain.allowedLateness = Swift.max(domain.allowedLateness, milliseconds)
                return (domain, milliseconds)
            }
            let state = context.operatorState()
            return { [weak state] source in
                Observable { observer, lifetime in
                    let scope = context.makeScope()
                    let window = AggregateWindow(fields: fields, now: scheduler.now)
                    let timer = SerialDisposable()
                    lifetime.add(timer)
                    /// Windows emitted that late elements may still update, while the watermark
                    /// is less than `allowedLateness` past their end.
                    func forgetExpired() {
                        guard let allowed = lateness?.1, let every else { return }
                        let now = scheduler.now.totalNanoseconds / 1_000_000
                        let length = every.totalNanoseconds / 1_000_000
                        window.emitted = window.emitted.filter { ($0.key + 1) * length + allowed > now }
                    }
                    func flush() {
                        guard let current = window.index else { return }
                        let start = every.map { ($0 * current).milliseconds } ?? 0
                        // The window's objects go out on behalf of every message counted in it.
                        let origin = Origin.joining(window.held)
                        window.held = []
                        window.index = nil
                        Origin.with(origin) {
                            let outputs = window.table.rows(start: start, keyed: by != nil)
                            if lateness != nil {
                                window.emitted[current] = window.table
                                window.table = AggregateTable(fields: fields)
                            } else {
                                window.table.clear()
                            }
                            for output in outputs { observer.on(.next(output)) }
                        }
                        forgetExpired()
                    }
                    /// A late element for a window already emitted: the window's row for its key
                    /// again, updated.
                    func update(_ element: Value, at late: Int64) throws -> Bool {
                        guard let every else { return false }
                        let length = every.totalNanoseconds / 1_000_000
                        let index = Int64((Double(late) / Double(length)).rounded(.down))
                        let now = scheduler.now.totalNanoseconds / 1_000_000
                        guard index < Int64((Double(now) / Double(length)).rounded(.down)) else { return false }
                        forgetExpired()
                        let table = window.emitted[index] ?? AggregateTable(fields: fields)
                        let key = try by.map { try context.evaluate($0, element, in: scope) } ?? .null
                        try table.add(element, key: key, scope: scope, context: context)
                        window.emitted[index] = table
                        for case .object(var row) in table.rows(start: index * length, keyed: by != nil, only: key) {
                            row["update"] = .bool(true)
                            observer.on(.next(.object(row)))
                        }
                        return true
                    }
                    func armClock(_ index: Int64) {
                        guard let every, time == nil else { return }
                        let end = window.clockStart + every * (index + 1)
                        // The timer works for no message of its own: the window carries its elements'.
                        timer.disposable = Origin.with(nil) {
                            scheduler.schedule(after: Swift.max(.zero, end - scheduler.now)) {
                                if !lifetime.isDisposed { flush() }
                            }
                        }
                    }
                    if let state {
                        if let restored = state.takeRestored() {
                            window.restore(restored, now: scheduler.now)
                            if let index = window.index { armClock(index) }
                        }
                        state.keep(
                            { window.saved(now: scheduler.now) }, origins: { window.held }, until: lifetime)
                    }
                    source.subscribe(
                        AnyObserver { event in
                            if lifetime.isDisposed { return }
                            switch event {
                            case .next(let element):
                                do {
                                    if let domain = lateness?.0, let late = domain.lateTime,
                                        try update(element, at: late)
                                    {
                                        return
                                    }
                                    var index: Int64 = 0
                                    if let every {
                                        let milliseconds: Double
                                        if let time {
                                            guard let at = try context.evaluate(time, element, in: scope).doubleValue
                                            else {
                                                throw context.error(
                                                    "aggregate: 'time' is not a number", element: element)
                                            }
                                            milliseconds = at
                                        } else {
                                            milliseconds = Double((scheduler.now - window.clockStart).milliseconds)
                                        }
                                        index = Int64((milliseconds / Double(every.milliseconds)).rounded(.down))
                                    }
                                    if let current = window.index, index > current { flush() }
                                    if window.index == nil {
                                        window.index = index
                                        armClock(index)
                                    }
                                    let key = try by.map { try context.evaluate($0, element, in: scope) } ?? .null
                                    try window.table.add(element, key: key, scope: scope, context: context)
                                    if let origin = Origin.current { window.held.append(origin) }
                                } catch {
                                    do { try context.elementFailed(error, element: element) } catch {
                                        observer.on(.error(error))
                                        lifetime.dispose()
                                    }
                                }
                            case .error:
                                observer.on(event)
                                lifetime.dispose()
                            case .completed:
                                flush()
                                observer.on(.completed)
                                lifetime.dispose()
                            }
                        }, in: lifetime.makeChild())
                }
            }
        }
    ).keepingState(of: [Key.by, Key.every, Key.time, Key.fields])
}

/// One subscription of `aggregate`: its table, the window it is open for, where its clock's
/// windows start, and the messages of what the window counted.
final class AggregateWindow {
    var table: AggregateTable
    /// With allowedLateness: the windows emitted that late elements may still update, by number.
    var emitted: [Int64: AggregateTable] = [:]
    /// The open window's number (its start over the window length); nil while none is open.
    var index: Int64?
    /// The pipeline-clock time windows are counted from (without `time`).
    var clockStart: RxTime
    /// The origins of the elements counted in the open window.
    var held: [Origin] = []

    init(fields: [AggregateField], now: RxTime) {
        table = AggregateTable(fields: fields)
        clockStart = now
    }

    /// What a checkpoint keeps: the time since the clock's start (so a resumed run goes on as if
    /// no time had passed), the open window's number and its table.
    func saved(now: RxTime) -> Value {
        var object = JSONObject()
        object["elapsed"] = Value(stateDuration: now - clockStart)
        if let index { object["window"] = .int(Int(index)) }
        object["table"] = table.saved()
        if !emitted.isEmpty {
            object["emitted"] = .array(
                emitted.sorted { $0.key < $1.key }.map { .array([.int(Int($0.key)), $0.value.saved()]) })
        }
        return .object(object)
    }

    /// Goes on from what `saved` kept.
    func restore(_ saved: Value, now: RxTime) {
        clockStart = now - (saved["elapsed"]?.stateDuration ?? .zero)
        index = saved["window"]?.intValue.map(Int64.init)
        if let table = saved["table"] { self.table.restore(table) }
        for entry in saved["emitted"]?.arrayValue ?? [] {
            guard let pair = entry.arrayValue, pair.count == 2, let number = pair[0].intValue else { continue }
            let kept = AggregateTable(fields: table.fields)
            kept.restore(pair[1])
            emitted[Int64(number)] = kept
        }
    }
}

/// The accumulators of one window, per key, in the order the keys came.
final class AggregateTable {
    let fields: [AggregateField]
    private var index: [Value: Int] = [:]
    private var keys: [Value] = []
    private var counts: [Int] = []
    /// One running value per field per key: sums and avg totals as numbers, extremes and firsts as values.
    private var numbers: [[Double]] = []
    private var seen: [[Int]] = []
    private var values: [[Value]] = []

    init(fields: [AggregateField]) {
        self.fields = fields
    }

    func add(_ element: Value, key: Value, scope: EvaluationScope, context: ComponentContext) throws {
        // Every field is worked out before anything changes, so an element that fails leaves the
        // table as it was (onError may drop it and go on).
        let evaluated = try fields.map { field -> Value? in
            guard let expression = field.expression else { return nil }
            let value = try context.evaluate(expression, element, in: scope)
            switch field.kind {
            case .sum, .avg, .min, .max:
                if case .null = value { return nil }
                guard value.doubleValue != nil else {
                    throw context.error(
                        "aggregate: \(field.kind.rawValue) of '\(field.name)' needs numbers, got \(value)",
                        element: element)
                }
            default: break
            }
            return value
        }
        let row: Int
        if let existing = index[key] {
            row = existing
        } else {
            row = keys.count
            index[key] = row
            keys.append(key)
            counts.append(0)
            numbers.append(Array(repeating: 0, count: fields.count))
            seen.append(Array(repeating: 0, count: fields.count))
            values.append(Array(repeating: .null, count: fields.count))
        }
        counts[row] += 1
        for (column, field) in fields.enumerated() {
            guard let value = evaluated[column] else { continue }
            switch field.kind {
            case .count: break
            case .first: if seen[row][column] == 0 { values[row][column] = value }
            case .last: values[row][column] = value
            case .sum, .avg, .min, .max:
                guard let number = value.doubleValue else { continue }  // null: checked above
                let first = seen[row][column] == 0
                switch field.kind {
                case .min:
                    if first || number < numbers[row][column] {
                        (numbers[row][column], values[row][column]) = (number, value)
                    }
                case .max:
                    if first || number > numbers[row][column] {
                        (numbers[row][column], values[row][column]) = (number, value)
                    }
                default: numbers[row][column] += number
                }
            }
            seen[row][column] += 1
        }
    }

    /// One object per key, in the order the keys came, and an empty table.
    func drain(start: Int64, keyed: Bool) -> [Value] {
        defer { clear() }
        return rows(start: start, keyed: keyed)
    }

    /// One object per key (or for `only` that key), in the order the keys came.
    func rows(start: Int64, keyed: Bool, only: Value? = nil) -> [Value] {
        var outputs: [Value] = []
        outputs.reserveCapacity(only == nil ? keys.count : 1)
        for (row, key) in keys.enumerated() where only == nil || only == key {
            var object = JSONObject()
            if keyed { object["key"] = key }
            object["start"] = .int(Int(start))
            for (column, field) in fields.enumerated() {
                let result: Value
                switch field.kind {
                case .count: result = .int(counts[row])
                case .sum: result = Self.number(numbers[row][column])
                case .avg:
                    result = seen[row][column] == 0 ? .null : .double(numbers[row][column] / Double(seen[row][column]))
                case .min, .max, .first, .last: result = values[row][column]
                }
                object[field.name] = result
            }
            outputs.append(.object(object))
        }
        return outputs
    }

    /// Empties the table.
    func clear() {
        index.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
        numbers.removeAll(keepingCapacity: true)
        seen.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// The table as a checkpoint keeps it: each key with its count and running values.
    func saved() -> Value {
        [
            "keys": .array(keys), "counts": .array(counts.map { .int($0) }),
            "numbers": .array(numbers.map { .array($0.map { .double($0) }) }),
            "seen": .array(seen.map { .array($0.map { .int($0) }) }),
            "values": .array(values.map { .array($0) }),
        ]
    }

    /// Takes back what `saved` kept (rows that do not have one entry per field are left out).
    func restore(_ saved: Value) {
        let savedKeys = saved["keys"]?.arrayValue ?? []
        let savedCounts = saved["counts"]?.arrayValue ?? []
        let savedNumbers = saved["numbers"]?.arrayValue ?? []
        let savedSeen = saved["seen"]?.arrayValue ?? []
        let savedValues = saved["values"]?.arrayValue ?? []
        for (row, key) in savedKeys.enumerated() {
            guard row < savedCounts.count, row < savedNumbers.count, row < savedSeen.count, row < savedValues.count,
                let count = savedCounts[row].intValue,
                let rowNumbers = savedNumbers[row].arrayValue?.compactMap(\.doubleValue),
                let rowSeen = savedSeen[row].arrayValue?.compactMap(\.intValue),
                let rowValues = savedValues[row].arrayValue,
                rowNumbers.count == fields.count, rowSeen.count == fields.count, rowValues.count == fields.count
            else { continue }
            index[key] = keys.count
            keys.append(key)
            counts.append(count)
            numbers.append(rowNumbers)
            seen.append(rowSeen)
            values.append(rowValues)
        }
    }

    private static func number(_ double: Double) -> Value {
        if let int = Int(exactly: double) { return .int(int) }
        return .double(double)
    }
}

extension Duration {
    /// The duration in whole milliseconds.
    fileprivate var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
