import Components
import CoreMetrics
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
import Prometheus
import Synchronization

/// What `run --metrics` shows of a run: its meters as swift-metrics counters exported by
/// swift-prometheus, and the same as a JSON snapshot for `rivulet top`.
final class RunMetricsExporter: Sendable {
    private let current: Mutex<RunMeters>
    private var meters: RunMeters { current.withLock { $0 } }
    private let pipeline: String
    private let started = ContinuousClock.now
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// What each counter was last told, by counter: the run's atomics are read at each scrape and
    /// the difference added, so the pipeline pays one relaxed add an event and nothing more.
    private let reported = Mutex<Reported>(Reported())

    private struct Reported {
        var counters: [String: (counter: CoreMetrics.Counter, value: Int)] = [:]
        var gauges: [String: CoreMetrics.Gauge] = [:]
        var timers: [String: CoreMetrics.Timer] = [:]
    }

    init(meters: RunMeters, pipeline: String) {
        current = Mutex(meters)
        self.pipeline = pipeline
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Shows the meters of a new version of the pipeline (`--watch`): the counters go on from
    /// their totals, so they never go down.
    func replace(_ meters: RunMeters) {
        reported.withLock { reported in
            for key in reported.counters.keys { reported.counters[key]?.value = 0 }
            current.withLock { $0 = meters }
        }
    }

    /// Records how long a checkpoint took to commit (`--state`): a histogram per pipeline.
    func observeCheckpoint(seconds: Double) {
        reported.withLock { reported in
            let timer =
                reported.timers["checkpoint"]
                ?? CoreMetrics.Timer(
                    label: "rivulet_checkpoint_duration_seconds", dimensions: [("pipeline", pipeline)],
                    preferredDisplayUnit: .seconds, factory: factory)
            reported.timers["checkpoint"] = timer
            timer.recordNanoseconds(Int64(seconds * 1e9))
        }
    }

    /// The Prometheus text exposition of every component's counters.
    func prometheusText() -> [UInt8] {
        reported.withLock { reported in
            for meter in meters.components {
                let labels = [
                    ("pipeline", pipeline), ("kind", meter.kind.rawValue), ("component", meter.component),
                    ("place", meter.place),
                ]
                func report(_ name: String, _ value: Int?, extra: [String] = []) {
                    guard let value else { return }
                    let dimensions = labels + (extra.count == 2 ? [(extra[0], extra[1])] : [])
                    let key = "\(name) \(meter.place) \(extra.joined(separator: "="))"
                    let entry =
                        reported.counters[key]
                        ?? (CoreMetrics.Counter(label: name, dimensions: dimensions, factory: factory), 0)
                    if value > entry.value { entry.counter.increment(by: value - entry.value) }
                    reported.counters[key] = (entry.counter, max(value, entry.value))
                }
                if meter.kind != .sink { report("rivulet_elements_out_total", meter.elements) }
                if meter.kind != .source { report("rivulet_elements_in_total", meter.elementsIn ?? 0) }
                report("rivulet_errors_total", meter.errors)
                // What the component counts itself: counters end in _total, the rest are gauges.
                for (extra, value) in meter.extraValues.sorted(by: { $0.key.name < $1.key.name }) {
                    let name = "rivulet_" + extra.name
                    if name.hasSuffix("_total") {
                        report(name, value, extra: extra.label)
                    } else {
                        let key = "\(name) \(meter.place) \(extra.label.joined(separator: "="))"
                        let dimensions = labels + (extra.label.count == 2 ? [(extra.label[0], extra.label[1])] : [])
                        let gauge =
                            reported.gauges[key]
                            ?? CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
                        reported.gauges[key] = gauge
                        gauge.record(value)
                    }
                }
                for (name, durations) in meter.takeDurations() {
                    let key = "\(name) \(meter.place)"
                    let timer =
                        reported.timers[key]
                        ?? CoreMetrics.Timer(
                            label: "rivulet_" + name, dimensions: labels, preferredDisplayUnit: .seconds,
                            factory: factory)
                    reported.timers[key] = timer
                    for seconds in durations { timer.recordNanoseconds(Int64(seconds * 1e9)) }
                }
            }
        }
        var text: [UInt8] = []
        registry.emit(into: &text)
        let ready = meters.readiness.isReady ? 1 : 0
        text += Array(
            """
            # TYPE rivulet_ready gauge
            rivulet_ready{pipeline="\(pipeline)"} \(ready)
            # TYPE rivulet_uptime_seconds gauge
            rivulet_uptime_seconds{pipeline="\(pipeline)"} \(uptime)

            """.utf8)
        return text
    }

    private var uptime: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `/stats`: the pipeline, whether it is ready, and one object a component.
    func statsJSON() -> [UInt8] {
        var bytes: [UInt8] = []
        JSONSerializer.write(.object(stats()), to: &bytes)
        return bytes + [0x0A]
    }

    /// The snapshot `/stats` serves, as an object (the live view adds its tables to it).
    func stats() -> JSONObject {
        let components: [Value] = meters.components.map { meter in
            var object = JSONObject()
            object["place"] = .string(meter.place)
            object["kind"] = .string(meter.kind.rawValue)
            object["component"] = .string(meter.component)
            if meter.kind != .source { object["in"] = .int(meter.elementsIn ?? 0) }
            if meter.kind != .sink { object["out"] = .int(meter.elements) }
            object["errors"] = .int(meter.errors)
            object["ended"] = .bool(meter.isEnded)
            let extras = meter.extraValues
            let byLabel = Self.byLabel(extras)
            if !byLabel.isEmpty { object["byLabel"] = .array(byLabel) }
            // Those without a label (an eventTime's watermark), by name.
            var values = JSONObject()
            for (key, value) in extras where key.label.isEmpty { values[key.name] = .int(value) }
            if !values.isEmpty { object["values"] = .object(values) }
            return .object(object)
        }
        var object = JSONObject()
        object["pipeline"] = .string(pipeline)
        object["ready"] = .bool(meters.readiness.isReady)
        object["uptimeSeconds"] = .double(uptime)
        object["components"] = .array(components)
        return object
    }

    var isReady: Bool { meters.readiness.isReady }

    /// A component's counters and gauges that carry a label (a group's `nats_partition_held` by
    /// `partition`, an HTTP source's requests by `status`), one table a label: `{label, columns,
    /// rows, titles, shown}`, a row a value of the label (numbers in numeric order), a column a
    /// metric, with its plain title and how it is shown (`MetricTitles`).
    static func byLabel(_ values: [ComponentMeter.ExtraKey: Int]) -> [Value] {
        var tables: [String: [String: [String: Int]]] = [:]
        for (key, value) in values where key.label.count == 2 {
            tables[key.label[0], default: [:]][key.label[1], default: [:]][key.name] = value
        }
        return tables.keys.sorted().map { label in
            let rows = tables[label]!
            let columns = Set(rows.values.flatMap(\.keys)).sorted()
            let ordered = rows.keys.sorted { a, b in
                if let a = Int(a), let b = Int(b) { return a < b }
                return a < b
            }
            var table = JSONObject()
            table["label"] = .string(label)
            table["columns"] = .array(columns.map(Value.string))
            // What `top` and the live view call the columns, and how they show their values.
            let titled = columns.map { MetricTitles.title($0, label: label) }
            table["titles"] = .array(titled.map { .string($0.title) })
            table["shown"] = .array(titled.map { .string($0.shown.rawValue) })
            table["rows"] = .array(
                ordered.map { name in
                    .array([.string(name)] + columns.map { rows[name]![$0].map(Value.int) ?? .null })
                })
            return .object(table)
        }
    }

    /// The component `place` means (a place, a stream's name or a glob: `PlacePattern`);
    /// without one, the first sink (what is written).
    func meter(at place: String?) -> Result<ComponentMeter, PlacePattern.PatternError> {
        let all = meters.components
        guard let place else {
            guard let meter = all.first(where: { $0.kind == .sink }) ?? all.last else {
                return .failure(.init("the run has no components"))
            }
            return .success(meter)
        }
        return PlacePattern(text: place).single(among: all.map { ($0.place, $0.component) }).map { chosen in
            all.first { $0.place == chosen }!
        }
    }

}
