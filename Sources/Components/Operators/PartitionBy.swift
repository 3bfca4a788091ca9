@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let key = Parameter<Expression>(
        "key", doc: "What decides an element's partition: elements with the same key go to the same one.",
        example: ".customer")
    static let partitions = Parameter<Int>(
        "partitions", default: 16,
        doc: "How many partitions the keys are spread over (the state is kept per partition).", example: "8"
    ).atLeast(1)
    static let threads = Parameter<Value>(
        "threads", default: .string("auto"),
        doc: "How many threads run the partitions: auto (one per core) or a number.", example: "2")
    static let ops = Parameter<ParameterValues.OperatorChain>(
        "ops", doc: "The operators each partition's elements go through, as a stream's ops.",
        example: "[{ aggregate: { by: .customer, every: 1m, fields: { orders: count } } }]")
    /// Set on a `partitionBy` the host put around an operator (never written in a file): on one
    /// thread it runs the operator as written instead of as one of `partitions` copies.
    static let byDefault = Parameter<Bool>(
        "byDefault", default: false, doc: "Put in by the host, not written.", example: "true")
}

extension BuiltinComponents {
    /// `partitionBy: {key: EXPR, partitions: N, threads: auto, ops: [...]}` — keyed state on every core.
    public static let partitionBy = ComponentSpec(
        name: "partitionBy",
        summary: "Splits the stream by key into partitions, each running its own copy of ops, on several threads.",
        docs: """
            Flink's and Kafka Streams' keyed parallelism: each element goes to partition \
            fnv1a32(key) % partitions (the FNV-1a hash of a text key's UTF-8 bytes, of any other key's \
            JSON text), and each partition runs its own copy of ops on its elements in order, with its \
            own state, on one of threads threads; what the partitions emit is merged. Elements of one \
            key keep their order; across keys, results come in the order the partitions produce them \
            (when ops is an aggregate on event time or without every, without allowedLateness or \
            time, then element-wise operators: in the order of one thread, whatever the threads, \
            except after a source whose messages are acknowledged). \
            On event time every partition follows the stream's watermark, so each element is on time \
            or late exactly as without partitions. Keyed operators in ops (aggregate with by, groupBy, \
            dedupe) give the same results as without partitions when their key decides the partition \
            key (lint warns otherwise). An operator that needs the whole stream (reduce, window, scan, \
            take, zip...) cannot be split: lint names it and ops then run as one partition (except after \
            the nats source of a runner group, where no runner sees the whole stream: each of the \
            group's partitions runs its own ops on its own messages). Partitions \
            run on the pipeline's thread (same partitions, same state, same results) on the virtual \
            clock, after a source whose messages are acknowledged (nats, httpServer, postgres changes), under --state \
            when ops has a groupBy, and when an operator in ops routes element errors (onError) or \
            calls now() or random(). A watched run (--metrics, --ui, top) shows for each partition the \
            elements sent to it, its lag (those of them its thread has not done yet) and the bytes of \
            its state (at each checkpoint under --state, else every second). Checkpoints keep each \
            partition's state; a run resumes with any threads, but the same key and partitions. An \
            eventTime in ops keeps a watermark per partition, from that partition's elements. After a \
            nats source with group and partitions the partitions are the group's (partitions must be the \
            source's; each message goes to its source partition's chain, each chain's eventTime a \
            watermark from its own partition's messages), and under --state each partition's state \
            is stored in JetStream with the partition and moves with it to the runner that takes it \
            over.
            """,
        parameters: [Key.key, Key.partitions, Key.threads, Key.ops],
        example: """
            - partitionBy:
                key: .customer
                partitions: 8
                ops:
                  - aggregate: { by: .customer, every: 1m, fields: { orders: count, total: { sum: .amount } } }
            """,
        validate: { values, validation in
            if case .string(let text) = values[Key.threads], text == "auto" {
            } else if case .int(let count) = values[Key.threads], (1...256).contains(count) {
            } else {
                validation.error(
                    "threads is auto or a number from 1 to 256, not \(values[Key.threads])", at: Key.threads, in: values
                )
            }
            let key = values[Key.key].source
            for component in values[Key.ops].operators {
                switch PartitionSafety.of(component, partitionKey: key) {
                case .safe: continue
                case .splitKey(let parameter, let written):
                    validation.warning(
                        "\(component.spec.name) keyed by \(written), not by the partition key \(key): a value of "
                            + "\(written) found in several partitions is counted in each",
                        at: Key.ops, in: values,
                        note: "partition by the same key (key: \(written)) for one answer per key")
                    _ = parameter
                case .wholeStream:
                    validation.warning(
                        "\(component.spec.name) needs the whole stream: ops run as one partition, on one thread",
                        at: Key.ops, in: values,
                        note: "keep \(component.spec.name) after partitionBy, or put it in a groupBy by the key")
                }
            }
        },
        checkpointing: .ofInnerChain(
            Key.ops, keeping: "for each partition, the state of its ops",
            described: "keeps, for each partition, the state of its ops (each as it keeps its own); needs every one "
                + "of its ops to be checkpointable"),
        elementErrors: true,
        factory: .operator { parameters, context in
            guard let partitioned = try partitioned(parameters, context) else {
                preconditionFailure("only a partitionBy put in by default runs its operator as written")
            }
            return partitioned
        }
    ).keepingState(of: [Key.key, Key.partitions]).declaring { traits in
        traits.innerRun = "each partition"
        traits.partitions = { values in (values[Key.partitions], Key.partitions.name) }
    }

    /// `partitionBy` as the compiler's splitter (`KeyedSplitter`): an operator the plan splits by
    /// its key by default runs inside a `partitionBy` by that key with the default partitions and
    /// threads, or, where that would use one thread, as written (nil).
    @_spi(Host) public static var keyedSplitter: KeyedSplitter {
        KeyedSplitter { component, key, context in
            let chain = ParameterValues.OperatorChain(operators: [component], location: component.use.location)
            return try partitioned(
                ParameterValues(
                    values: [Key.key.spec.name: key, Key.ops.spec.name: chain, Key.byDefault.spec.name: true]),
                context)
        }
    }

    /// A `partitionBy`'s operator; nil for one put in by default (`byDefault`) that would run on
    /// one thread: its operator then runs as written, with the same output in the same order.
    private static func partitioned(_ parameters: ParameterValues, _ context: ComponentContext) throws
        -> PipelineOperator?
    {
        guard let layout = PartitionLayout(parameters, context) else { return nil }
        let partitions = layout.partitions
        let prefix = context.checkpointKey
        // What the partitions emitted and had not passed on when the run stopped.
        let state = context.operatorState()
        // Watched: each partition's state is measured at each checkpoint, or without --state
        // every second, from the states its operators keep for it alone.
        let probes =
            context.meter != nil && context.checkpoints == nil ? (0..<partitions).map { _ in StateProbe() } : []
        let gauges = context.meter.map {
            PartitionGauges(
                meter: $0, partitions: partitions, onThreads: layout.threads > 1 && layout.runLoop != nil,
                measures: probes.map { probe in probe.measure })
        }
        if let gauges, let checkpoints = context.checkpoints {
            checkpoints.afterReading { gauges.measureState(in: $0, keyPrefix: prefix) }
        }
        let probed = { (placement: ChainPlacement, index: Int) -> ChainPlacement in
            var placement = placement
            placement.stateProbe = probes.isEmpty ? nil : probes[index]
            return placement
        }
        if layout.threads > 1, let runLoop = layout.runLoop {
            return onThreads(
                parameters, layout: layout, runLoop: runLoop, context: context, state: state, gauges: gauges,
                probed: probed)
        }
        return try onTheStreamsThread(
            parameters, layout: layout, context: context, state: state, gauges: gauges, probed: probed)
    }

    /// How many partitions and threads a `partitionBy` runs with, and whether their results are
    /// put back in the one-thread order.
    private struct PartitionLayout {
        let partitions: Int
        let threads: Int
        let ordered: Bool
        let runLoop: SerialRunLoopScheduler?
        let eventClock: EventTimeScheduler?

        /// Nil for a `partitionBy` put in by default that would run on one thread.
        init?(_ parameters: ParameterValues, _ context: ComponentContext) {
            let key = parameters[Key.key]
            let ops = parameters[Key.ops]
            let splittable = ops.operators.allSatisfy {
                PartitionSafety.of($0, partitionKey: key.source) != .wholeStream
            }
            // After a group's source no runner sees the whole stream: each partition's messages go
            // to that partition's chain whatever its ops (lint's check and the run's agree).
            let afterGroup = context.groupPartitions != nil
            partitions = splittable || afterGroup ? parameters[Key.partitions] : 1
            var threads = min(partitions, parameters[Key.threads].intValue ?? PartitionThreads.cores)
            eventClock = context.scheduler as? EventTimeScheduler
            runLoop = (eventClock?.base ?? context.scheduler) as? SerialRunLoopScheduler
            // A chain built while the run goes on (a groupBy's per group) registers its state with
            // the run's checkpoints, which only the pipeline's thread may touch.
            let buildsChains = ops.operators.contains { component in
                component.parameters.values.values.contains { $0 is ParameterValues.OperatorChain }
            }
            if runLoop == nil || (context.checkpoints != nil && buildsChains)
                || context.sourcesSetOrigins
                || !ops.operators.allSatisfy(PartitionSafety.runsOnItsOwnThread)
            {
                threads = 1
            }
            // On threads, an aggregate's results are put back in the order of one thread; where
            // they cannot be, an operator split by default is not split (threads never change
            // what a run writes).
            ordered = KeyedSplit.keepsOneThreadOrder(ops.operators, onEventTime: eventClock != nil)
            if parameters[Key.byDefault] && !ordered { threads = 1 }
            self.threads = threads
            // Where it cannot use the threads, an operator split by default runs as written: same
            // output, same order, as if it had not been split.
            if threads == 1 && parameters[Key.byDefault] { return nil }
        }
    }

    /// The partitions on threads of their own.
    private static func onThreads(
        _ parameters: ParameterValues, layout: PartitionLayout, runLoop: SerialRunLoopScheduler,
        context: ComponentContext, state: OperatorState<Value>?, gauges: PartitionGauges?,
        probed: @escaping (ChainPlacement, Int) -> ChainPlacement
    ) -> PipelineOperator {
        let ops = parameters[Key.ops]
        let prefix = context.checkpointKey
        // Partitions are built on their own threads, and the pipeline's services are not to be
        // written from several at once: what their operators share across partitions (an
        // aggregate's bounds) is made here first.
        _ = context.shared(AggregateBudgets.self) { AggregateBudgets() }
        // On event time, right behind eventTime, elements come as they come (each with its time)
        // when the partitions' first operator takes them so (an aggregate); else in time order, at
        // the clock's time. Either way nothing waits in a partition for the watermark: what waits
        // is in eventTime's checkpointed state.
        let offer = context.offered(EventTimeOffer.self).flatMap { offer in
            ops.operators.first.map(PartitionSafety.takesElementsAsTheyCome) == true ? offer : nil
        }
        offer?.isTaken = true
        let domain = layout.eventClock.flatMap { clock in
            offer?.domain ?? context.existing(EventTimeDomain<Value>.self).flatMap { $0.clock === clock ? $0 : nil }
        }
        return PartitionedRun.threaded(
            partitions: layout.partitions, threads: layout.threads, key: parameters[Key.key], context: context,
            runLoop: runLoop, eventTime: domain, ordered: layout.ordered, state: state, gauges: gauges,
            build: { index, placement in
                try context.build(ops, checkpointedAs: "\(prefix) [p\(index)]", placement: probed(placement, index))
            })
    }

    /// Every partition on the stream's own clock, and the first operator of each offered what was
    /// offered to partitionBy (eventTime's elements as they come), exactly as without partitions.
    private static func onTheStreamsThread(
        _ parameters: ParameterValues, layout: PartitionLayout, context: ComponentContext,
        state: OperatorState<Value>?, gauges: PartitionGauges?,
        probed: @escaping (ChainPlacement, Int) -> ChainPlacement
    ) throws -> PipelineOperator {
        let (ops, key, partitions, prefix) = (
            parameters[Key.ops], parameters[Key.key], layout.partitions, context.checkpointKey
        )
        let placement = ChainPlacement(clock: context.scheduler, handedOn: context.handedOn)
        // Their results in the one-thread order, as on threads (threads change nothing); not
        // after a source whose messages are acknowledged (a result held for its place would go
        // on without the messages it stands for).
        let orders =
            layout.ordered && partitions > 1 && !context.sourcesSetOrigins
            ? (0..<partitions).map { _ in PartitionOrder() } : []
        let build = { (index: Int) in
            var own = probed(placement, index)
            if !orders.isEmpty { own.services.append(orders[index]) }
            return try context.build(ops, checkpointedAs: "\(prefix) [p\(index)]", placement: own)
        }
        // After a group's source, the partitions are the group's: each message goes to its
        // source partition's chain.
        guard let source = context.groupPartitions else {
            return PartitionedRun.inline(
                chains: try (0..<partitions).map(build), key: key, context: context, state: state, gauges: gauges,
                orders: orders)
        }
        guard partitions == source.partitions else {
            throw context.error(
                "after the nats source of group \(source.group) each partition is the group's: partitions must be "
                    + "\(source.partitions) (the source's), not \(partitions)")
        }
        // Each chain has event time of its own, from its partition's messages only: one
        // watermark over every partition's lane would wait on lanes that never feed the chain.
        let buildOwn = { (index: Int) in
            let own = ChainPlacement(
                clock: context.scheduler, services: [EventTimeDomain<Value>(base: context.scheduler), SeenLanesOnly()],
                handedOn: context.handedOn)
            return try context.build(ops, checkpointedAs: "\(prefix) [p\(index)]", placement: own)
        }
        // Under --state their state is the group's too (stored with the partition, not in
        // this runner's file).
        guard let group = context.existing(GroupPartitionStates.self) else {
            return PartitionedRun.inline(
                chains: try (0..<partitions).map(buildOwn), key: key, context: context, state: state,
                gauges: gauges, routeByLane: true)
        }
        let checkpoints = context.checkpoints
        checkpoints?.forget(keysStartingWith: "\(prefix) [p")
        return PartitionedRun.inline(
            chains: try (0..<partitions).map(buildOwn), key: key, context: context, state: state, gauges: gauges,
            group: group,
            rebuild: { index, restored in
                checkpoints?.forget(keysStartingWith: PartitionChainSet.keyPrefix(prefix, partition: index) + " ")
                checkpoints?.restore(restored)
                return try buildOwn(index)
            })
    }

    /// How many partitions a `partitionBy` has when not told.
    public static var defaultPartitions: Int { Key.partitions.spec.defaultValue?.intValue ?? 16 }
}

/// Whether an operator in `partitionBy`'s ops gives the same results split by key as on the whole
/// stream, and whether it may run on a thread of its own.
enum PartitionSafety: Equatable {
    case safe
    /// Keyed by something that may not decide the partition key (the parameter, as written).
    case splitKey(parameter: String, written: String)
    case wholeStream

    static func of(_ component: ValidatedComponent, partitionKey: String) -> PartitionSafety {
        switch component.spec.partitioning(component.parameters) {
        case .anyKey: return .safe
        case .wholeStream: return .wholeStream
        case .keyed(let expression, let parameter):
            if expression.source == "." || contains(expression.source, term: partitionKey) { return .safe }
            return .splitKey(parameter: parameter, written: expression.source)
        }
    }

    /// Whether `text` has `term` as a whole term (`.k` in `[.k, .v]`, not in `.kind`): a key made
    /// of the partition key and more decides the partition key.
    static func contains(_ text: String, term: String) -> Bool {
        let text = Array(text.filter { $0 != " " }.utf8)
        let term = Array(term.filter { $0 != " " }.utf8)
        guard !term.isEmpty, text.count >= term.count else { return false }
        func isBoundary(_ index: Int) -> Bool {
            guard index >= 0, index < text.count else { return true }
            return "[]{},:()".utf8.contains(text[index])
        }
        for start in 0...(text.count - term.count) where text[start..<start + term.count].elementsEqual(term) {
            if isBoundary(start - 1) && isBoundary(start + term.count) { return true }
        }
        return false
    }

    /// Whether `component` takes event time's elements as they come, rather than in time order
    /// once the watermark reaches them (an aggregate with windows and no `time`).
    static func takesElementsAsTheyCome(_ component: ValidatedComponent) -> Bool {
        component.spec.traits.takesEventTimeAsItComes(component.parameters)
    }

    /// Whether `component` may run on a partition's thread: it declares that it keeps nothing but
    /// its own state (`Threading.ownStateOnly`), with pure expressions and no `onError` routing,
    /// and so do the operators of its inner chains.
    static func runsOnItsOwnThread(_ component: ValidatedComponent) -> Bool {
        guard PipelineCompiler.runsInParallel(component) else { return false }
        return component.parameters.values.values.allSatisfy { value in
            guard let chain = value as? ParameterValues.OperatorChain else { return true }
            return chain.operators.allSatisfy(runsOnItsOwnThread)
        }
    }
}
