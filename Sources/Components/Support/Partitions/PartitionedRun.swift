@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// How `partitionBy` runs its partitions: all on the stream's own thread, or on threads of their
/// own. Either way each partition is one copy of the chain, fed its keys' elements in order.
enum PartitionedRun {
    /// Every partition on the stream's own thread and clock: each element goes to its
    /// partition's chain at once, and what the chains emit goes on as they emit it.
    ///
    /// In a group's runner (`routeByLane`) the partitions are the group's: each message goes to its
    /// source partition's chain. Under `--state` (`group`) a partition this runner takes over or
    /// lets go of has its chain built again (`rebuild`) from the state its last owner stored, or
    /// empty.
    static func inline(
        chains: [PipelineOperator], key: Expression, context: ComponentContext, state: OperatorState<Value>?,
        gauges: PartitionGauges?, orders: [PartitionOrder] = [], routeByLane: Bool = false,
        group: GroupPartitionStates? = nil, rebuild: ((Int, [String: Value]) throws -> PipelineOperator)? = nil
    ) -> PipelineOperator {
        { [weak state] source in
            Observable { observer, lifetime in
                runInline(
                    source, chains: chains, key: key, context: context, state: state, gauges: gauges, orders: orders,
                    routeByLane: routeByLane || group != nil, group: group, rebuild: rebuild, observer: observer,
                    lifetime: lifetime)
            }
        }
    }

    private static func runInline(
        _ source: Observable<Value>, chains: [PipelineOperator], key: Expression, context: ComponentContext,
        state: OperatorState<Value>?, gauges: PartitionGauges?, orders: [PartitionOrder], routeByLane: Bool,
        group: GroupPartitionStates?,
        rebuild: ((Int, [String: Value]) throws -> PipelineOperator)?, observer: AnyObserver<Value>,
        lifetime: Lifetime
    ) {
        // What a run kept (results held for their place, or that a run on threads had not
        // passed on) goes on first.
        emitRestored(state, to: observer)
        let merge = PartitionMerge(
            observer: observer, lifetime: lifetime, running: chains.count,
            ordering: orders.isEmpty ? nil : OrderedResults(partitions: orders.count))
        let clock = (context.scheduler as? EventTimeScheduler)?.base ?? context.scheduler
        let releaseAtTurnsEnd = turnRelease(
            of: merge, partitions: orders.count, clock: clock, eventClock: context.scheduler as? EventTimeScheduler,
            lifetime: lifetime)
        let subscribe: (Int, PipelineOperator) -> PartitionLane = { partition, chain in
            let lane = PartitionLane(domain: nil, lifetime: lifetime.makeChild())
            let observer: AnyObserver<Value> =
                orders.isEmpty
                ? AnyObserver { merge.take($0) }
                : AnyObserver { event in
                    let place = orders[partition].place ?? .last
                    orders[partition].place = nil
                    var output = PartitionOutput(event, at: place)
                    merge.take(&output, from: partition)
                    if !event.isStopEvent { releaseAtTurnsEnd() }
                }
            chain(lane.source).subscribe(observer, in: lane.lifetime)
            return lane
        }
        let lanes = LaneList(chains.enumerated().map(subscribe))
        // Nothing else waits between the partitions and the stream on one thread.
        state?.keep({ .array(merge.heldInOrder) }, origins: { [] }, until: lifetime)
        for index in chains.indices { gauges?.startMeasuring(index, on: clock, until: lifetime) }
        let route: (() -> Int?)? = routeByLane ? { GroupPartitionStates.partitionOfCurrentMessage() } : nil
        var sent: Int64 = 0
        if let group, let rebuild {
            let install: (Int, [String: Value]) -> Void = { partition, restored in
                guard !lifetime.isDisposed else { return }
                lanes.items[partition].lifetime.dispose()
                do {
                    lanes.items[partition] = subscribe(partition, try rebuild(partition, restored))
                } catch {
                    merge.take(.error(error))
                }
            }
            group.attach(PartitionChainSet(prefix: context.checkpointKey, install: install))
        }
        split(
            source, by: key, among: lanes.items.count, context: context, merge: merge, lifetime: lifetime,
            route: route,
            send: { element, partition in
                gauges?.sent(1, to: partition)
                if !orders.isEmpty {
                    orders[partition].sequence = sent
                    sent &+= 1
                }
                lanes.items[partition].deliver(element)
            },
            end: { for lane in lanes.items { lane.end() } })
    }

    /// With `orders`, what the partitions emit in one turn of the clock is held, then passed on in
    /// order once the turn is over (every partition has then run the timers due by then): this
    /// asks for that release, once a turn.
    private static func turnRelease(
        of merge: PartitionMerge, partitions: Int, clock: any SchedulerType, eventClock: EventTimeScheduler?,
        lifetime: Lifetime
    ) -> () -> Void {
        var releaseAsked = false
        // Cancelled with the run: a release still due when a virtual clock's run ended would keep
        // the merge, and every sink after it, alive.
        let release = SerialDisposable()
        lifetime.add(release)
        return {
            guard !releaseAsked, let eventClock else { return }
            releaseAsked = true
            release.disposable = Origin.with(nil) {
                clock.schedule {
                    releaseAsked = false
                    for partition in 0..<partitions {
                        var progress = PartitionOutput(doneUpTo: eventClock.clock)
                        merge.take(&progress, from: partition)
                    }
                }
            }
        }
    }

    /// Subscribes to `source`, sending each element with its partition to `send`, and calling
    /// `end` when it completes; an error, or a key that fails the run, goes to `merge`.
    static func split(
        _ source: Observable<Value>, by key: Expression, among count: Int, context: ComponentContext,
        merge: PartitionMerge, lifetime: Lifetime, route: (() -> Int?)? = nil, send: @escaping (Value, Int) -> Void,
        end: @escaping () -> Void
    ) {
        let scope = context.makeScope()
        source.subscribe(
            AnyObserver { event in
                if lifetime.isDisposed { return }
                switch event {
                case .next(let element):
                    do {
                        let routed = route?().flatMap { (0..<count).contains($0) ? $0 : nil }
                        guard
                            let partition = try routed
                                ?? partition(of: element, by: key, among: count, context: context, scope: scope)
                        else { return }
                        send(element, partition)
                    } catch {
                        merge.take(.error(error))
                    }
                case .error: merge.take(event)
                case .completed:
                    end()
                    merge.upstreamCompleted()
                }
            }, in: lifetime.makeChild())
    }

    /// The partition of `element` (nil when its key failed and `onError` dropped it); the key is
    /// not worked out for one partition.
    static func partition(
        of element: Value, by key: Expression, among count: Int, context: ComponentContext, scope: EvaluationScope
    ) throws -> Int? {
        guard count > 1 else { return 0 }
        // A plain `.name` key is read in place (text written without escapes is hashed where it
        // lies); anything else is evaluated (and may fail).
        if let text = key.withFieldText(of: element, { PartitionHash.partition(ofText: $0, count: count) }) {
            return text
        }
        if let value = key.fieldValue(of: element) { return PartitionHash.partition(of: value, count: count) }
        guard let value = try context.handling(element, { try context.evaluate(key, element, in: scope) })
        else { return nil }
        return PartitionHash.partition(of: value, count: count)
    }

    /// Partitions on `threads` threads of their own (partition `p` on thread `p % threads`), each
    /// on its own clock: the thread's run loop, or on event time an event-time clock of its own
    /// that follows the stream's watermark. The pipeline's thread works out each element's
    /// partition and sends elements in batches; what the partitions emit comes back to it. A
    /// checkpoint pauses the threads once they have done what they were sent and what they
    /// emitted has gone on; what they emitted that has not gone on when the run stops is kept in
    /// `state` and emitted first by the run that resumes.
    ///
    /// With `ordered`, each partition's chain is an `aggregate` (then operators of one element at
    /// a time) whose results are put back in the order the one-thread run gives (`OrderedResults`).
    static func threaded(
        partitions: Int, threads: Int, key: Expression, context: ComponentContext, runLoop: SerialRunLoopScheduler,
        eventTime: EventTimeDomain<Value>?, ordered: Bool = false, state: OperatorState<Value>?,
        gauges: PartitionGauges?,
        build: @escaping (Int, ChainPlacement) throws -> PipelineOperator
    ) -> PipelineOperator {
        let run = ThreadedRun(
            partitions: partitions, threads: threads, key: key, context: context, runLoop: runLoop,
            eventTime: eventTime, ordered: ordered, gauges: gauges, build: build)
        return { [weak state] source in
            Observable { observer, lifetime in
                emitRestored(state, to: observer)
                run.run(source, state: state, observer: observer, lifetime: lifetime)
            }
        }
    }

    /// One `threaded` partitioning: what each of its subscriptions runs with.
    private struct ThreadedRun {
        let partitions: Int
        let threads: Int
        let key: Expression
        let context: ComponentContext
        let runLoop: SerialRunLoopScheduler
        let eventTime: EventTimeDomain<Value>?
        let ordered: Bool
        let gauges: PartitionGauges?
        let build: (Int, ChainPlacement) throws -> PipelineOperator

        /// Starts the threads and their chains, then splits `source` among them.
        func run(
            _ source: Observable<Value>, state: OperatorState<Value>?, observer: AnyObserver<Value>, lifetime: Lifetime
        ) {
            let pool = PartitionThreads(count: threads)
            pool.start()
            let lanes = makeLanes(on: pool)
            let chains: [PipelineOperator]
            do {
                chains = try buildChains(of: lanes, on: pool)
            } catch {
                pool.stop { _ in }
                observer.on(.error(error))
                return
            }
            // The stream's event time lets late elements on as far as a partition's operators
            // take them (an aggregate's allowedLateness), as it does for operators behind it.
            if let eventTime {
                for lane in lanes {
                    eventTime.allowedLateness = max(eventTime.allowedLateness, lane.domain?.allowedLateness ?? 0)
                }
            }
            let merge = PartitionMerge(
                observer: observer, lifetime: lifetime, running: partitions,
                ordering: ordered ? OrderedResults(partitions: partitions) : nil)
            let mailbox = PartitionMailbox()
            let drain = Self.drain(mailbox, into: merge, freeingOn: pool, threads: threads)
            let dispatch = PartitionDispatch(
                pool: pool, lanes: lanes, eventTime: eventTime, runLoop: runLoop, lifetime: lifetime,
                gauges: gauges, drain: drain)
            stopTogether(pool: pool, lanes: lanes, dispatch: dispatch, drain: drain, lifetime: lifetime)
            // Results held for their place go first, in order, then what was posted.
            let kept = { () -> Value in .array(merge.heldInOrder + (mailbox.elements.arrayValue ?? [])) }
            state?.keep(kept, origins: { [] }, until: lifetime)
            let wake = Unchecked(drain)
            for (index, lane) in lanes.enumerated() {
                let chain = Unchecked(chains[index])
                let (thread, runLoop, gauges) = (index % threads, runLoop, gauges)
                pool.control(thread) {
                    chain.value(lane.source).subscribe(
                        lane.outbox(on: pool.loops[thread]) { output in
                            if mailbox.post(output, of: index, from: thread) { runLoop.enqueue { wake.value() } }
                        }, in: lane.lifetime)
                    gauges?.startMeasuring(index, on: pool.loops[thread], until: lane.lifetime)
                }
            }
            split(
                source, by: key, among: partitions, context: context, merge: merge, lifetime: lifetime,
                send: dispatch.add(_:to:), end: dispatch.end)
        }

        /// Each lane is made on the thread that runs it, in that thread's memory: made here, its
        /// objects (written for every element there) would share cache lines with this thread's
        /// own, and each core's writes would take those lines from the other.
        private func makeLanes(on pool: PartitionThreads) -> [PartitionLane] {
            var made: [PartitionLane?] = Array(repeating: nil, count: partitions)
            for thread in 0..<threads {
                let (partitions, threads, eventTime, ordered) = (partitions, threads, eventTime, ordered)
                let ofThread = pool.perform(on: thread) {
                    stride(from: thread, to: partitions, by: threads).map { index in
                        (index, makeLane(eventTime: eventTime, base: pool.loops[thread], ordered: ordered))
                    }
                }
                for (index, lane) in ofThread { made[index] = lane }
            }
            return made.map { $0! }
        }

        /// Each partition's chain, on its lane's clock (its thread's run loop, or its event time).
        private func buildChains(of lanes: [PartitionLane], on pool: PartitionThreads) throws -> [PipelineOperator] {
            try lanes.enumerated().map { index, lane in
                let clock: any SchedulerType = lane.domain?.clock ?? pool.loops[index % threads]
                var services: [AnyObject] = []
                if let domain = lane.domain { services.append(domain) }
                if let order = lane.order { services.append(order) }
                return try build(index, ChainPlacement(clock: clock, services: services, handedOn: lane.offer))
            }
        }

        /// A checkpoint pauses the threads once what they were sent is done and what they emitted
        /// has gone on; the run's end stops them the same way, after which their chains go.
        private func stopTogether(
            pool: PartitionThreads, lanes: [PartitionLane], dispatch: PartitionDispatch,
            drain: @escaping () -> Void, lifetime: Lifetime
        ) {
            let threads = threads
            /// What the threads do last, or before a checkpoint: send on what they emitted.
            let flushOutboxes = { @Sendable (thread: Int) in
                for (index, lane) in lanes.enumerated() where index % threads == thread { lane.flushOutbox() }
            }
            let barrier = PartitionBarrier(
                pause: {
                    dispatch.flush(evenWhenStopped: true)
                    pool.pause(with: flushOutboxes)
                    drain()
                }, resume: pool.resume)
            let checkpoints = context.checkpoints
            checkpoints?.add(barrier)
            lifetime.onDispose {
                checkpoints?.remove(barrier)
                // What was sent is done, and what it emitted waits in the mailbox for the last
                // checkpoint, before the threads end.
                dispatch.flush(evenWhenStopped: true)
                pool.stop { thread in
                    flushOutboxes(thread)
                    for (index, lane) in lanes.enumerated() where index % threads == thread {
                        lane.lifetime.dispose()
                    }
                }
            }
        }

        /// Passes on what the threads posted. The pool weakly: what waits in a stopped thread's
        /// queue must not keep it.
        private static func drain(
            _ mailbox: PartitionMailbox, into merge: PartitionMerge, freeingOn pool: PartitionThreads, threads: Int
        ) -> () -> Void {
            { [weak pool] in
                var posts = mailbox.take()
                for index in posts.indices {
                    merge.take(&posts[index].output, from: posts[index].partition)
                    // A post of nothing but how far its partition got has nothing to free.
                    if posts[index].output.isEmpty { continue }
                    // What is left of the elements is freed on the thread that made them (glibc
                    // frees a block under its arena's lock, and that arena reuses it): the box
                    // holds the only reference, let go of there.
                    let leftovers = Leftovers(posts[index].output.events, posts[index].output.values)
                    posts[index].output = PartitionOutput()
                    pool?.control(posts[index].thread) { leftovers.free() }
                }
                // Results held for their place and passed on are freed where they were made too:
                // each list moved out, so that the box holds the only reference when it goes.
                var spent = merge.takeSpent()
                for partition in spent.indices where !spent[partition].isEmpty {
                    var events: [Event<Value>] = []
                    swap(&events, &spent[partition])
                    let leftovers = Leftovers(consume events, [])
                    pool?.control(partition % threads) { leftovers.free() }
                }
            }
        }
    }

    /// A partition's lane: on event time with a clock of its own on `base`, following the stream's.
    private static func makeLane(eventTime: EventTimeDomain<Value>?, base: SerialRunLoopScheduler, ordered: Bool)
        -> PartitionLane
    {
        let domain = eventTime.map { eventTime in
            let domain = EventTimeDomain<Value>(base: base)
            // A resumed run's partitions start where the stream's watermark was kept.
            if eventTime.clock.isStarted { domain.clock.restore(clock: eventTime.clock.clock) }
            return domain
        }
        return PartitionLane(domain: domain, lifetime: Lifetime(), order: ordered ? PartitionOrder() : nil)
    }

    /// What the partitions had emitted and had not gone on when the run this one resumes stopped:
    /// it goes on first.
    static func emitRestored(_ state: OperatorState<Value>?, to observer: AnyObserver<Value>) {
        guard let state else { return }
        for element in state.takeRestored()?.arrayValue ?? [] { observer.on(.next(element)) }
    }
}

/// The lanes of an inline run, one a partition, replaced when a partition's chain is built again.
final class LaneList {
    var items: [PartitionLane]
    init(_ items: [PartitionLane]) { self.items = items }
}

/// A checkpoint's pause of `partitionBy`'s threads.
final class PartitionBarrier: CheckpointBarrier {
    private let pauseThreads: () -> Void
    private let resumeThreads: () -> Void

    init(pause: @escaping () -> Void, resume: @escaping () -> Void) {
        pauseThreads = pause
        resumeThreads = resume
    }

    func pause() { pauseThreads() }
    func resume() { resumeThreads() }
}

/// What the pipeline's thread is done with, handed back to a partition's thread to be freed there.
final class Leftovers: @unchecked Sendable {
    private var events: [Event<Value>]
    private var values: [Value]
    init(_ events: [Event<Value>], _ values: [Value]) {
        self.events = events
        self.values = values
    }

    /// Lets go of them, on the thread that runs this.
    func free() {
        events = []
        values = []
    }
}

/// Holds a value that crosses to a partition's thread and back, touched by one thread at a time.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The pipeline's side of a threaded `partitionBy`: the batches being filled, one per partition,
/// sent when full or once the pipeline's thread has done what is due now.
final class PartitionDispatch {
    // Used on the pipeline's thread alone: the per-element dynamic exclusivity checks on its
    // properties buy nothing.
    private let pool: PartitionThreads
    private let lanes: [PartitionLane]
    private let eventTime: EventTimeDomain<Value>?
    private let runLoop: SerialRunLoopScheduler
    private let lifetime: Lifetime
    /// What a watched run counts of each partition.
    private let gauges: PartitionGauges?
    /// Passes on what the partitions emitted so far.
    private let drain: () -> Void
    @exclusivity(unchecked) private var batches: [PartitionBatch]
    /// The event-time clock each partition was last told.
    @exclusivity(unchecked) private var told: [Int64?]
    @exclusivity(unchecked) private var flushPending = false
    /// How many elements were sent (each entry carries its number, for `PartitionOrder`).
    @exclusivity(unchecked) private var sent: Int64 = 0
    /// Batches given back, and those taken back but not filled again yet.
    private let returned = ReturnedBatches()
    @exclusivity(unchecked) private var spare: [PartitionBatch] = []
    /// Elements per batch: enough that a send, and the wake of a thread that waited for it, costs
    /// little beside the batch's work (256 woke W3's partition threads about ten times as often).
    private static let batchSize = 1024

    init(
        pool: PartitionThreads, lanes: [PartitionLane], eventTime: EventTimeDomain<Value>?,
        runLoop: SerialRunLoopScheduler,
        lifetime: Lifetime, gauges: PartitionGauges?, drain: @escaping () -> Void
    ) {
        self.drain = drain
        self.gauges = gauges
        self.pool = pool
        self.lanes = lanes
        self.eventTime = eventTime
        self.runLoop = runLoop
        self.lifetime = lifetime
        batches = Array(repeating: PartitionBatch(), count: lanes.count)
        told = Array(repeating: nil, count: lanes.count)
    }

    func add(_ element: Value, to partition: Int) {
        var time: Int64 = 0
        var mark: Int64 = 0
        if let eventTime {
            // As eventTime delivers it: its own time (as it comes, or late), else the clock's.
            mark = eventTime.clock.clock
            time = eventTime.elementTime ?? eventTime.lateTime ?? mark
        }
        if batches[partition].entries.capacity == 0 { batches[partition] = storage() }
        // An object read on demand goes as its bytes, which the partition's thread reads into
        // objects of its own; anything else goes as it is.
        if let packedAt = JSONParser.pack(
            element, into: &batches[partition].packed, end: &batches[partition].packedEnd)
        {
            batches[partition].entries.append(
                PartitionBatch.Entry(time: time, mark: mark, sequence: sent, packedAt: packedAt))
        } else {
            batches[partition].entries.append(PartitionBatch.Entry(time: time, mark: mark, sequence: sent))
            batches[partition].elements.append(element)
        }
        sent &+= 1
        if batches[partition].entries.count >= Self.batchSize {
            send(partition)
            // A source that emits everything in one turn (a file read to its end) would leave what
            // the partitions emit waiting for that turn's end, all of it held at once.
            drain()
        }
        if !flushPending {
            flushPending = true
            runLoop.schedule { [weak self] in self?.flush() }
        }
    }

    /// An empty batch: the storage of one a partition gave back (its elements freed here), or new.
    private func storage() -> PartitionBatch {
        if spare.isEmpty { returned.take(into: &spare) }
        guard var batch = spare.popLast() else {
            var batch = PartitionBatch()
            batch.entries.reserveCapacity(Self.batchSize)
            return batch
        }
        batch.entries.removeAll(keepingCapacity: true)
        batch.elements.removeAll(keepingCapacity: true)
        batch.packedEnd = 0
        batch.mark = nil
        return batch
    }

    private func send(_ partition: Int) {
        var batch = PartitionBatch()
        swap(&batch, &batches[partition])
        if eventTime != nil, let last = batch.entries.last { told[partition] = last.mark }
        if let clock = eventTime?.clock.clock, told[partition] != clock {
            batch.mark = clock
            told[partition] = clock
        }
        let lane = lanes[partition]
        let count = batch.entries.count
        gauges?.sent(count, to: partition)
        let sent = Unchecked(batch)
        let returned = returned
        let gauges = gauges
        pool.send(to: partition % pool.loops.count) {
            lane.receive(sent.value, returning: returned)
            gauges?.done(count, by: partition)
        }
    }

    /// Sends every batch with elements, and tells every partition where the event-time clock is.
    func flush(evenWhenStopped: Bool = false) {
        flushPending = false
        guard evenWhenStopped || !lifetime.isDisposed else { return }
        let clock = eventTime?.clock.clock
        for partition in lanes.indices where !batches[partition].entries.isEmpty || told[partition] != clock {
            send(partition)
        }
    }

    /// The stream ended: what is left goes, then each partition ends.
    func end() {
        flush()
        for (index, lane) in lanes.enumerated() {
            pool.control(index % pool.loops.count) { lane.end() }
        }
    }
}

/// What the partitions emit, on the pipeline's thread: passed on as it comes, or with `ordering`
/// in the one-thread order; the result completes once the stream and every partition have, and
/// an error of any ends it.
final class PartitionMerge {
    private let observer: AnyObserver<Value>
    private let lifetime: Lifetime
    private var running: Int
    private var upstreamEnded = false
    private var ordering: OrderedResults?

    init(observer: AnyObserver<Value>, lifetime: Lifetime, running: Int, ordering: OrderedResults? = nil) {
        self.observer = observer
        self.lifetime = lifetime
        self.running = running
        self.ordering = ordering
    }

    /// The results held for their place, in order (for a checkpoint).
    var heldInOrder: [Value] { ordering?.heldInOrder ?? [] }

    /// What partition `partition` emitted in one turn of its thread. Held results are moved out of
    /// `output`, which keeps what is left to free on the partition's thread.
    func take(_ output: inout PartitionOutput, from partition: Int) {
        guard ordering != nil else {
            for event in output.events { take(event) }
            return
        }
        var completed = false
        for event in output.events {
            switch event {
            case .next(let value):
                // An object without a place (not through `PartitionOrder`) goes after all placed ones.
                output.values.append(value)
                output.places.append(.last)
            case .error: take(event)
            case .completed: completed = true
            }
        }
        ordering?.add(&output.values, at: output.places, from: partition, doneUpTo: output.doneUpTo)
        if completed { ordering?.completed(partition) }
        release()
        if completed { take(.completed) }
    }

    /// Results passed on after being held, by the partition that made them, until taken.
    private var spent: [[Event<Value>]] = []

    /// Passes on the held results no partition can come before any more. Each is moved from the
    /// list into its event and on into `spent`: a result was made on another core, and every
    /// copy of it (a reference count taken and given back) stalls this thread on that core's
    /// cache line.
    private func release() {
        guard !lifetime.isDisposed, var released = ordering?.released() else { return }
        released.withUnsafeMutableBufferPointer { moved in
            for index in moved.indices {
                let (partition, value) = (moved.baseAddress! + index).move()
                let event = Event.next(consume value)
                observer.on(event)
                if spent.count <= partition { spent += repeatElement([], count: partition + 1 - spent.count) }
                spent[partition].append(consume event)
            }
            moved.baseAddress!.initialize(repeating: (0, .null), count: moved.count)
        }
    }

    /// The results passed on after being held since last taken, by the partition that made them
    /// (to be freed on its thread).
    func takeSpent() -> [[Event<Value>]] {
        var taken: [[Event<Value>]] = []
        swap(&taken, &spent)
        return taken
    }

    func take(_ event: Event<Value>) {
        if lifetime.isDisposed { return }
        switch event {
        case .next: observer.on(event)
        case .error:
            observer.on(event)
            lifetime.dispose()
        case .completed:
            running -= 1
            finishIfDone()
        }
    }

    func upstreamCompleted() {
        upstreamEnded = true
        finishIfDone()
    }

    private func finishIfDone() {
        guard upstreamEnded, running == 0, !lifetime.isDisposed else { return }
        observer.on(.completed)
        lifetime.dispose()
    }
}
