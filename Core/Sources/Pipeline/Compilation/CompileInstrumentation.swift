import Reactive

/// How the compiler makes a run watchable: a meter for each component a watched run shows, and
/// `--trace`'s record of every event leaving a source or operator.
final class CompileInstrumentation {
    let meters: RunMeters?
    let tracer: ((TraceEvent) -> Void)?
    private let pipeline: ValidatedPipeline
    private let scheduler: any SchedulerType
    /// The meter of the last stage of each stream built so far (a meter's upstream).
    private var lastMeters: [String: ComponentMeter] = [:]

    init(
        pipeline: ValidatedPipeline, scheduler: any SchedulerType, meters: RunMeters?,
        tracer: ((TraceEvent) -> Void)?
    ) {
        self.pipeline = pipeline
        self.scheduler = scheduler
        self.meters = meters
        self.tracer = tracer
    }

    /// Whether operators are watched one by one (each has a meter, or the run is traced): then
    /// none is fused with its neighbours or handed to a source.
    var watchesOperators: Bool { tracer != nil || meters?.metersOperators == true }

    /// A component's meter, made before the component is built so that it can find it; nil for
    /// an operator when operators are not metered.
    func meter(stream: String, part: String, _ spec: ComponentSpec, key: String) -> ComponentMeter? {
        if spec.kind == .operator && meters?.metersOperators == false { return nil }
        return meters?.add(
            place: RunMeters.place(pipeline, stream: stream, part), kind: spec.kind, component: spec.name,
            upstream: lastMeters[stream], key: key)
    }

    /// The meter of the sink at `index`, reading `stream`.
    func sinkMeter(index: Int, stream: String, _ spec: ComponentSpec, key: String) -> ComponentMeter? {
        meters?.add(
            place: RunMeters.sinkPlace(pipeline, index: index), kind: .sink, component: spec.name,
            upstream: lastMeters[stream], key: key)
    }

    /// A stream that reads `upstream` starts where it ends (for the next meter's upstream).
    func continues(_ stream: String, from upstream: String) {
        if let meter = lastMeters[upstream] { lastMeters[stream] = meter }
    }

    /// `observable` counted by `meter`, the last stage of `stream` so far.
    func metered(_ observable: Observable<Value>, stream: String, _ meter: ComponentMeter?) -> Observable<Value> {
        guard let meter else { return observable }
        lastMeters[stream] = meter
        return RunMeters.metered(observable, meter)
    }

    /// `observable` with every event it sends recorded under `label`, when the run is traced.
    func traced(_ observable: Observable<Value>, _ label: String, _ location: SourceLocation) -> Observable<Value> {
        guard let tracer else { return observable }
        let scheduler = scheduler
        func record(_ event: Event<Value>) {
            tracer(TraceEvent(label: label, location: location, time: scheduler.now, event: event))
        }
        return observable.do(
            onNext: { record(.next($0)) }, onError: { record(.error($0)) }, onCompleted: { record(.completed) })
    }
}
