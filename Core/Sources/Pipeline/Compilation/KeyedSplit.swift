import Reactive

/// Which of a pipeline's operators run split by their key over the cores by default, as if
/// written inside `partitionBy` by the same key: one that declares it (`ComponentTraits
/// .splitsByDefault`, an `aggregate` by a key) and is keyed, may run on a partition's thread
/// (its expressions are pure, it routes no element errors), and whose partitions' results can be
/// put back in the order one thread gives (`SplitOrder`). Its state is split by key, so each
/// partition's answer is the whole answer for its keys, and the output is the same bytes. The
/// compiler's plan and `rivulet graph` both read it; where the split runs on threads is the
/// run's to say (the cores, the clock).
@_spi(Host) public enum KeyedSplit {
    /// The key `component` is split by by default; nil when it is not.
    public static func key(of component: ValidatedComponent, onEventTime: Bool) -> Expression? {
        guard component.spec.traits.splitsByDefault,
            case .keyed(let key, _) = component.spec.partitioning(component.parameters),
            PipelineCompiler.runsInParallel(component),
            keepsOneThreadOrder([component], onEventTime: onEventTime)
        else { return nil }
        return key
    }

    /// Whether partitions on threads running `ops` can give their results in the order one thread
    /// gives them: the first operator declares so (`SplitOrder`: an `aggregate` on event time, or
    /// without windows), and the others take one element at a time.
    public static func keepsOneThreadOrder(_ ops: [ValidatedComponent], onEventTime: Bool) -> Bool {
        guard let first = ops.first else { return false }
        switch first.spec.traits.splitOrder(first.parameters) {
        case .never: return false
        case .onEventTime where !onEventTime: return false
        case .onEventTime, .always: break
        }
        return ops.dropFirst().allSatisfy { component in
            if case .elementwise = component.spec.factory { return true }
            return false
        }
    }

    /// Where each operator on event time is written: those after one that starts event time
    /// (`eventTime`) in their stream, or in a stream that reads one on event time.
    public static func onEventTime(_ pipeline: ValidatedPipeline) -> Set<SourceLocation> {
        var streamOnEventTime: [String: Bool] = [:]
        var locations: Set<SourceLocation> = []
        // Streams come after those they read (a stream reads only streams declared before it
        // resolves; several passes settle any order).
        for _ in 0..<max(1, pipeline.streams.count) {
            var changed = false
            for stream in pipeline.streams {
                var on = false
                if case .stream(let name) = stream.origin { on = streamOnEventTime[name] ?? false }
                for component in stream.operators {
                    if component.spec.traits.startsEventTime { on = true }
                    if on { locations.insert(component.use.location) }
                }
                if streamOnEventTime[stream.name] != on {
                    streamOnEventTime[stream.name] = on
                    changed = true
                }
            }
            if !changed { break }
        }
        return locations
    }

    /// The key of each stream operator the plan splits by default, by where it is written: none
    /// when operators are watched one by one (their views show the operators as written), the
    /// run keeps state (checkpoints must not depend on the machine or the flags of the run that
    /// took them) or the file says `parallel: 1`. Operators of inner chains (a `groupBy`'s, a
    /// `partitionBy`'s) run as written.
    public static func keys(_ pipeline: ValidatedPipeline, watchesOperators: Bool = false, keepsState: Bool = false)
        -> [SourceLocation: Expression]
    {
        guard !watchesOperators, !keepsState, pipeline.spec.parallel != 1 else { return [:] }
        let eventTimed = onEventTime(pipeline)
        var keys: [SourceLocation: Expression] = [:]
        for stream in pipeline.streams {
            for component in stream.operators {
                let location = component.use.location
                keys[location] = key(of: component, onEventTime: eventTimed.contains(location))
            }
        }
        return keys
    }
}

/// How an operator is split by its key over the cores: what `partitionBy` does, given to the
/// compiler as a service by whoever registers `partitionBy` (the core cannot build it). Asked
/// where the plan splits an operator; it answers nil where the split would run on one thread
/// (one core, a virtual clock, a source that sets message origins), and the operator is then
/// built as written: the same output either way.
@_spi(Host) public final class KeyedSplitter {
    /// The operator `component` split by `key`, built with `context` (the component's own).
    public let split:
        (_ component: ValidatedComponent, _ key: Expression, _ context: ComponentContext) throws -> (
            PipelineOperator
        )?

    /// A splitter.
    public init(
        split:
            @escaping (_ component: ValidatedComponent, _ key: Expression, _ context: ComponentContext) throws -> (
                PipelineOperator
            )?
    ) {
        self.split = split
    }
}
