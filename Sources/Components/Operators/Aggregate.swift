@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let by = Parameter<Expression?>(
        "by", doc: "The key of the groups (default: one group of everything).", example: ".service")
    static let every = Parameter<RxTimeInterval?>(
        "every", doc: "Tumbling windows of this length (default: one window, to the end of the stream).",
        example: "1m"
    ).atLeast(RxTimeInterval.clockResolution)
    static let time = Parameter<Expression?>(
        "time", doc: "Event time in milliseconds, from the element (default: the pipeline's clock).", example: ".ts")
    static let allowedLateness = Parameter<RxTimeInterval?>(
        "allowedLateness",
        doc:
            "On event time: how long after a window was emitted a late element still updates it (emitted again, with update: true).",
        example: "1m"
    ).above(RxTimeInterval.zero)
    static let maxKeys = Parameter<Int>(
        "maxKeys", default: 1_000_000,
        doc:
            "The most keys it holds at once, over its open windows (and those kept for late elements) and every partition it is split into; an element of one more key is an element error (onError)."
    ).atLeast(1)
    static let maxMemory = Parameter<Int>(
        "maxMemoryMiB", default: 1024,
        doc:
            "About the most memory (MiB) its keys and their fields may take, over every window and partition; an element of a key past it is an element error (onError)."
    ).atLeast(1)
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
    /// Whether the expressions of an `aggregate`'s `fields` call nothing that depends on time or
    /// order (`now()`, `random()`): they are written as text and read when it is built, so the
    /// compiler's check of its parameters does not see them.
    public static func aggregateFieldsArePure(_ parameters: ParameterValues) -> Bool {
        guard case .success(let fields) = AggregateField.parse(parameters[Key.fields].pairs) else { return true }
        return fields.allSatisfy { $0.expression?.isPure ?? true }
    }

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
            aligned to the epoch and close when the watermark passes their end (right behind eventTime, each \
            element is counted in its window as it comes instead of waiting for the watermark: the same \
            objects, in the same order, sooner and with no element held); with allowedLateness, an \
            element that comes behind the watermark by at most that much updates the window it belongs to \
            even after it was emitted, and that key's object is emitted again with update: true (an \
            sqlite sink with key [key, start] then replaces its row); later than that it is late as \
            eventTime says. Memory is one accumulator per field per key of the open windows (and of the \
            windows still open to late elements), at most maxKeys keys and about maxMemoryMiB at once for \
            the operator as written, however many partitions it is split into: an element of one key \
            more is an element error (its onError decides), so a key with no bound cannot take all \
            memory. On completion the open window is emitted. sum, min, \
            max and avg take numbers; null is skipped. With by, rivulet run splits it by its key over \
            every core (as inside partitionBy by the same key; not with parallel: 1, --state, --metrics, \
            --ui, --summary, --trace, after nats or httpServer, or on one core; not windows on the run's \
            clock, with allowedLateness or with time, whose order could not be kept): its output is the \
            same bytes as on one thread, each window's objects held until every partition passed its end.
            """,
        parameters: [Key.by, Key.every, Key.time, Key.allowedLateness, Key.maxKeys, Key.maxMemory, Key.fields],
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
            let maxKeys = parameters[Key.maxKeys]
            // One budget for every copy of this aggregate (the partitions it is split into).
            let budget = context.shared(AggregateBudgets.self) { AggregateBudgets() }.budget(
                for: context.location, maxKeys: maxKeys, maxBytes: parameters[Key.maxMemory] << 20)
            EventTimeDomain<Value>.countWindows(of: budget, in: context)
            let every = parameters[Key.every]
            // Late elements reach it only on event time, from the clock's eventTime.
            let lateness = try parameters[Key.allowedLateness].map {
                (domain: try EventTimeDomain<Value>.allowing($0, in: context), allowed: $0.totalNanoseconds / 1_000_000)
            }
            // Right behind eventTime, each element is counted in the window of its own time as it
            // comes (nothing waits for the watermark); the watermark closes the windows. The
            // objects are the same as if the elements had waited (see AggregateTable.ordersByTime).
            let asTheyCome = context.offered(EventTimeOffer.self).flatMap { offer -> EventTimeDomain<Value>? in
                guard every != nil, parameters[Key.time] == nil else { return nil }
                offer.isTaken = true
                return offer.domain
            }
            let settings = AggregateSettings(
                fields: fields, by: by, keyExpression: by ?? Expression(constant: .null), maxKeys: maxKeys,
                budget: budget, everyMilliseconds: every?.milliseconds, time: parameters[Key.time],
                keepsEmitted: lateness != nil, ordersByTime: asTheyCome != nil,
                // Split over threads by partitionBy, which puts the results back in this order.
                order: context.existing(PartitionOrder.self), context: context)
            let windowing = AggregateWindowing(
                every: every, lateness: lateness, asTheyCome: asTheyCome, scheduler: context.scheduler)
            let state = context.operatorState()
            return { [weak state] source in
                source.aggregate(
                    windowing, accumulator: { AggregateTables(settings).accumulator },
                    elementFailed: { error, element in try context.elementFailed(error, element: element) },
                    state: state)
            }
        }
    ).keepingState(of: [Key.by, Key.every, Key.time, Key.fields]).runningOnAnyThread().declaring { traits in
        traits.keyed(by: Key.by, otherwise: .wholeStream)
        traits.builtExpressionsArePure = aggregateFieldsArePure
        // Split by key, its windows' objects are put back in one thread's order where every
        // partition closes a window at the same point: at completion, or at a watermark. On the
        // run's clock, with allowedLateness (updates come as late elements do) or with time, not.
        traits.splitOrder = { values in
            guard !values.has(Key.allowedLateness), !values.has(Key.time) else { return .never }
            return values.has(Key.every) ? .onEventTime : .always
        }
        traits.splitsByDefault = true
        traits.takesEventTimeAsItComes = { values in values.has(Key.every) && !values.has(Key.time) }
    }
}

/// What every subscription of one `aggregate` shares: its parameters read, and what it runs with.
private struct AggregateSettings {
    let fields: [AggregateField]
    let by: Expression?
    /// `by`, or null for one row a window (read in place per element).
    let keyExpression: Expression
    let maxKeys: Int
    let budget: AggregateBudget
    let everyMilliseconds: Int64?
    let time: Expression?
    /// With allowedLateness: emitted windows are kept for late elements.
    let keepsEmitted: Bool
    /// Right behind eventTime: tables keep each key's time (see `AggregateTable.ordersByTime`).
    let ordersByTime: Bool
    let order: PartitionOrder?
    let context: ComponentContext
}

/// The tables of one subscription of `aggregate`, as the runtime's operator counts in them: each
/// element in its window's table, each table's objects when its window closes.
private final class AggregateTables {
    private let settings: AggregateSettings
    private let scope: EvaluationScope
    private let window: AggregateWindow

    init(_ settings: AggregateSettings) {
        self.settings = settings
        scope = settings.context.makeScope()
        window = AggregateWindow(
            fields: settings.fields, ordersByTime: settings.ordersByTime, sequenced: settings.order != nil,
            budget: settings.budget)
    }

    var accumulator: WindowAccumulator<Value> {
        WindowAccumulator(
            time: settings.time.map { time in { [self] element in try self.time(of: element, by: time) } },
            count: { [self] element, number, time in try count(element, in: number, time: time) },
            close: { [self] number, start, end, emit in close(number, start: start, end: end, emit: emit) },
            update: { [self] element, number, time, emit in try update(element, in: number, at: time, emit: emit) },
            forget: { [window] number in window.forgetEmitted(before: number) },
            save: { [window] in window.saved() }, restore: { [window] saved in window.restore(saved) })
    }

    /// `time` of `element`, in milliseconds.
    private func time(of element: Value, by time: Expression) throws -> Double {
        let context = settings.context
        guard let at = try context.evaluate(time, element, in: scope).doubleValue else {
            throw context.error("aggregate: 'time' is not a number", element: element)
        }
        // Beyond ±2^53 ms a window number is no longer exact (nor, far enough, representable):
        // an element error, not a trap.
        guard at.magnitude < 9.007e15 else {
            throw context.error(
                "aggregate: 'time' \(at) is out of range (milliseconds since the epoch)", element: element)
        }
        return at
    }

    private func count(_ element: Value, in number: Int64, time: Int64?) throws {
        try window.withTable(number) { table in
            try table.add(
                element, keyedBy: settings.keyExpression, scope: scope, context: settings.context,
                maxKeys: settings.maxKeys, time: time, sequence: settings.order?.sequence ?? 0)
        }
    }

    /// Emits window `number`'s objects: each with its place among every partition's (its
    /// window's end on the clock, its key's earliest time and number in the stream) when split.
    private func close(_ number: Int64, start: Int64, end: Int64, emit: (Value) -> Void) {
        guard let table = window.close(number) else { return }
        let keyed = settings.by != nil
        guard let order = settings.order else {
            let outputs = table.rows(start: start, keyed: keyed)
            if settings.keepsEmitted { window.keepEmitted(number, table) } else { window.recycle(table) }
            for output in outputs { emit(output) }
            return
        }
        let (outputs, places) = table.placedRows(start: start, keyed: keyed, end: end)
        if settings.keepsEmitted { window.keepEmitted(number, table) } else { window.recycle(table) }
        for (output, place) in Swift.zip(outputs, places) {
            order.place = place
            emit(output)
        }
    }

    /// A late element for window `number`, emitted already: that key's object again, updated.
    private func update(_ element: Value, in number: Int64, at late: Int64, emit: (Value) -> Void) throws {
        guard let length = settings.everyMilliseconds else { return }
        let table = window.emitted[number] ?? window.makeTable()
        let key = try settings.context.evaluate(settings.keyExpression, element, in: scope)
        try table.add(
            element, keyedBy: settings.keyExpression, scope: scope, context: settings.context,
            maxKeys: settings.maxKeys, time: late)
        window.keepEmitted(number, table)
        for case .object(var row) in table.rows(start: number * length, keyed: settings.by != nil, only: key) {
            row["update"] = .bool(true)
            emit(.object(row))
        }
    }
}
