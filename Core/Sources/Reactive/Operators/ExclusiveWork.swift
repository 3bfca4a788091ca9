extension ObservableType {
    /// Maps an element to an inner observable only while no inner runs, and mirrors it; an element
    /// that arrives while one runs is dropped (RxSwift's `flatMapFirst`).
    ///
    /// The selector runs only for an element that is taken. The result completes when the source
    /// has completed and no inner runs; the selector's error, an inner's error or the source's
    /// error ends it at once. An inner keeps its outer element's message open until it is done,
    /// as with `flatMap`.
    public func flatMapFirst<Inner: ObservableType>(
        _ selector: @escaping (Element) throws -> Inner
    ) -> Observable<Inner.Element> {
        exclusiveWork { FirstInnerRules(selector: { try selector($0).asObservable() }) }
    }

    /// One piece of work at a time, as `makeRules()` (called at each subscription) decides: an
    /// element arriving while no work runs, `gate`'s latest value is true (until it has one, it is
    /// false; without a gate, always true) and the rules admit it starts the rules' work; any
    /// other is refused (`refused`), never queued. The work's elements are the result's. A failed
    /// work either ends the result or leaves the operator idle, as the rules say. The result
    /// completes when its source has completed and no work runs; the source's or the gate's error
    /// ends it. The source ending never ends the work that runs. `flatMapFirst`, and the `action`
    /// and `scanPaginate` components, are built on it.
    @_spi(Components) public func exclusiveWork<Rules: ExclusiveWorkRules>(
        gate: Observable<Bool>? = nil, _ makeRules: @escaping () -> Rules
    ) -> Observable<Rules.Output> where Rules.Input == Element {
        let inputs = asObservable()
        return Observable { observer, lifetime in
            let sink = ExclusiveWorkSink(
                rules: makeRules(), hasGate: gate != nil, downstream: observer, lifetime: lifetime)
            sink.run(inputs, gate: gate)
        }
    }
}

/// What an operator built on `exclusiveWork` decides; called on the pipeline's thread.
@_spi(Components) public protocol ExclusiveWorkRules: AnyObject {
    /// What starts work.
    associatedtype Input
    /// What the work emits.
    associatedtype Output

    /// At subscription, before the gate and the source are subscribed: the input whose work runs
    /// first, if any (restored from a checkpoint), neither gated nor asked about.
    func subscribed(in lifetime: Lifetime) -> Input?
    /// The gate's latest value changed (`open`).
    func gateChanged(open: Bool)
    /// Whether `input` starts work; asked only while no work runs and the gate is open.
    func admits(_ input: Input) -> Bool
    /// `input` came while work ran, the gate was closed or `admits` said no.
    func refused(_ input: Input)
    /// Starts the work for `input`: its elements are the result's; `running` ends with it.
    func work(for input: Input, running: Lifetime) throws -> Observable<Output>
    /// The work failed (it has been let go of): nil leaves the operator idle, or the error ends the
    /// result.
    func failed(_ error: any Error, input: Input) -> (any Error)?
    /// The work ended (completed, or failed and went on): the operator is idle again.
    func ended()
}

extension ExclusiveWorkRules {
    /// Nothing to restore.
    public func subscribed(in lifetime: Lifetime) -> Input? { nil }
    /// Nothing to say.
    public func gateChanged(open: Bool) {}
    /// Every input is admitted.
    public func admits(_ input: Input) -> Bool { true }
    /// A refused input is dropped.
    public func refused(_ input: Input) {}
    /// A failure ends the result.
    public func failed(_ error: any Error, input: Input) -> (any Error)? { error }
    /// Nothing to say.
    public func ended() {}
}

/// `flatMapFirst`'s rules: every element admitted while idle, the selector's inner carrying the
/// element's message, any failure the result's.
final class FirstInnerRules<Input, Output>: ExclusiveWorkRules {
    let selector: (Input) throws -> Observable<Output>

    init(selector: @escaping (Input) throws -> Observable<Output>) {
        self.selector = selector
    }

    func work(for input: Input, running: Lifetime) throws -> Observable<Output> {
        let inner = try selector(input)
        return Origin.current.map { inner.carrying($0) } ?? inner
    }
}

/// The state of one `exclusiveWork` subscription.
final class ExclusiveWorkSink<Rules: ExclusiveWorkRules>: Sink<Rules.Output> {
    let rules: Rules
    /// The work that runs, if any.
    var running: Lifetime?
    var gateOpen: Bool
    var inputsDone = false

    init(rules: Rules, hasGate: Bool, downstream: AnyObserver<Rules.Output>, lifetime: Lifetime) {
        self.rules = rules
        self.gateOpen = !hasGate
        super.init(downstream: downstream, lifetime: lifetime)
    }

    func run(_ inputs: Observable<Rules.Input>, gate: Observable<Bool>?) {
        let restored = rules.subscribed(in: lifetime)
        if let gate {
            let gateLifetime = lifetime.makeChild()
            gate.subscribe(AnyObserver { self.onGate($0, gateLifetime) }, in: gateLifetime)
        }
        if let restored, !isDisposed { start(restored) }
        // A child lifetime: the source ending must not end the work that runs.
        let inputsLifetime = lifetime.makeChild()
        inputs.subscribe(AnyObserver { self.onInput($0, inputsLifetime) }, in: inputsLifetime)
    }

    private func onGate(_ event: Event<Bool>, _ gateLifetime: Lifetime) {
        if isDisposed { return }
        switch event {
        case .next(let open):
            gateOpen = open
            rules.gateChanged(open: open)
        case .error(let error):
            forwardTerminal(.error(error))
        case .completed:
            gateLifetime.dispose()  // its last value stays, as in combineLatest
        }
    }

    private func onInput(_ event: Event<Rules.Input>, _ inputsLifetime: Lifetime) {
        if isDisposed { return }
        switch event {
        case .next(let input):
            guard running == nil, gateOpen, rules.admits(input) else { return rules.refused(input) }
            start(input)
        case .error(let error):
            forwardTerminal(.error(error))
        case .completed:
            inputsDone = true
            inputsLifetime.dispose()
            if running == nil { forwardTerminal(.completed) }
        }
    }

    private func start(_ input: Rules.Input) {
        let current = lifetime.makeChild()
        running = current
        let work: Observable<Rules.Output>
        do {
            work = try rules.work(for: input, running: current)
        } catch {
            return forwardTerminal(.error(error))
        }
        work.subscribe(AnyObserver { self.onWork($0, input, current) }, in: current)
    }

    private func onWork(_ event: Event<Rules.Output>, _ input: Rules.Input, _ current: Lifetime) {
        if isDisposed || current.isDisposed { return }
        switch event {
        case .next:
            forward(event)
        case .error(let error):
            finishWork(current)
            if let failure = rules.failed(error, input: input) { return forwardTerminal(.error(failure)) }
            rules.ended()
            if inputsDone { forwardTerminal(.completed) }
        case .completed:
            finishWork(current)
            rules.ended()
            if inputsDone { forwardTerminal(.completed) }
        }
    }

    private func finishWork(_ current: Lifetime) {
        current.dispose()
        if running === current { running = nil }
    }
}
