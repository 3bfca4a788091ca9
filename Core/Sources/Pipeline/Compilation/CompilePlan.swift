/// What the compiler decides before it builds anything, from the checked pipeline alone: for each
/// stream, the operators offered to its source to run on several threads, how the others are
/// applied (adjacent element-wise ones fused into one step, the rest alone), which are split by
/// their key over the cores (`KeyedSplit`), and whether several readers share it. Nothing here
/// builds a component, so each decision is unit-tested as data. `rivulet run` and `rivulet test`
/// compile the same plan; only how many threads a split gets differs (a virtual clock's, one).
struct CompilePlan: Equatable {
    /// How some of a stream's operators are applied.
    enum Step: Equatable {
        /// Adjacent element-wise operators (these indexes) run as one step: none is watched one by
        /// one, none has a side stream somebody reads.
        case fused(Range<Int>)
        /// One operator applied on its own, with its side streams, trace and meter.
        case alone(Int)
    }

    /// The first `operators` operators of a stream, offered to its source to run on `workers`
    /// threads; the source may decline (only some sources can run operators).
    struct ParallelOffer: Equatable {
        let operators: Int
        let workers: Int
    }

    /// The key an operator is split by over the cores.
    struct SplitKey: Equatable {
        let key: Expression

        static func == (left: SplitKey, right: SplitKey) -> Bool { left.key.source == right.key.source }
    }

    /// One stream's decisions.
    struct StreamPlan: Equatable {
        let name: String
        /// What its source is offered; nil when it reads another stream, or nothing can be.
        let parallel: ParallelOffer?
        /// Whether several read it: it is then shared through one subscription.
        let isShared: Bool
        /// Whether each operator may join a fused step.
        let fusable: [Bool]
        /// The operators split by their key over the cores (by index), each standing alone.
        var splits: [Int: SplitKey] = [:]

        /// The steps that apply its operators from `first` on (past those its source took).
        func steps(from first: Int) -> [Step] {
            var steps: [Step] = []
            var index = first
            while index < fusable.count {
                guard fusable[index] else {
                    steps.append(.alone(index))
                    index += 1
                    continue
                }
                let start = index
                while index < fusable.count && fusable[index] { index += 1 }
                steps.append(.fused(start..<index))
            }
            return steps
        }
    }

    /// The streams, in the order they are built (each after those it reads).
    let streams: [StreamPlan]

    /// The plan for `pipeline`. `watchesOperators`: every operator is traced or metered one by
    /// one, so none is fused, handed to a source or split (their views show the operators as
    /// written). `cores`: the threads a file without `parallel:` may use when it is one stream of
    /// such operators. `keepsState`: the run keeps checkpoints, which must not depend on the
    /// machine or the flags of the run that took them, so nothing is split by default; nor with
    /// `parallel: 1`.
    init(_ pipeline: ValidatedPipeline, watchesOperators: Bool, cores: Int, keepsState: Bool = false) {
        let splitKeys = KeyedSplit.keys(pipeline, watchesOperators: watchesOperators, keepsState: keepsState)
        streams = pipeline.streams.map { stream in
            let sided = stream.operators.indices.map { Self.hasSideStreams(pipeline, stream.name, $0) }
            let fusable = stream.operators.indices.map { index in
                guard case .elementwise = stream.operators[index].spec.factory else { return false }
                return !watchesOperators && !sided[index]
            }
            var offer: ParallelOffer?
            if case .component = stream.origin, !watchesOperators {
                let handable = stream.operators.indices.prefix { index in
                    guard case .elementwise = stream.operators[index].spec.factory else { return false }
                    return PipelineCompiler.runsInParallel(stream.operators[index]) && !sided[index]
                }.count
                // Without `parallel:`, a pipeline that is nothing but such a stretch between a
                // source and its sinks uses every core.
                let workers =
                    pipeline.spec.parallel
                    ?? (pipeline.streams.count == 1 && handable == stream.operators.count ? min(cores, 64) : 1)
                if workers > 1 && handable > 0 { offer = ParallelOffer(operators: handable, workers: workers) }
            }
            var plan = StreamPlan(
                name: stream.name, parallel: offer, isShared: pipeline.readerCounts[stream.name, default: 0] > 1,
                fusable: fusable)
            for (index, component) in stream.operators.enumerated() {
                if let key = splitKeys[component.use.location] { plan.splits[index] = SplitKey(key: key) }
            }
            return plan
        }
    }

    /// Whether somebody reads a side stream of the operator at `index` of `stream`.
    static func hasSideStreams(_ pipeline: ValidatedPipeline, _ stream: String, _ index: Int) -> Bool {
        pipeline.sideStreams.values.contains { $0.stream == stream && $0.operatorIndex == index }
    }
}
