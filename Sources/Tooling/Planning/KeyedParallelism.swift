@_spi(Host) import Components
@_spi(Host) import Pipeline

/// A stream's `aggregate` by a key runs on every core by default in a real run, as if written
/// inside `partitionBy` by the same key: its state is split by key, so each partition's answer
/// is the whole answer for its keys, and the partitions' results are put back in the order one
/// thread gives them (the output is the same bytes). It runs as written, on one thread, where `partitionBy` would
/// use one (a source that acknowledges messages, the virtual clock), and where the run does not
/// split (`rivulet run` splits with more than one core, without `parallel: 1`, `--state` or
/// operators watched one by one, whose views show the operators as written).
@_spi(Host) public enum KeyedParallelism {
    /// How many partitions an operator split by default runs in: `partitionBy`'s default.
    public static var partitions: Int { BuiltinComponents.defaultPartitions }

    /// The key `component` is split by when it runs on every core by default: the key of an
    /// operator that declares it is split by default (`ComponentTraits.splitsByDefault`, an
    /// `aggregate` by a key), when its expressions are pure and it routes no element errors (what
    /// may run on a partition's thread), and its partitions' results can be put back in the order
    /// one thread gives (`SplitOrder`); nil for anything else.
    public static func defaultKey(of component: ValidatedComponent, onEventTime: Bool) -> Expression? {
        guard component.spec.traits.splitsByDefault,
            case .keyed(let key, _) = component.spec.partitioning(component.parameters),
            PipelineCompiler.runsInParallel(component),
            BuiltinComponents.splitsInOneThreadOrder([component], onEventTime: onEventTime)
        else { return nil }
        return key
    }

    /// Where each operator on event time is written: those after an `eventTime` in their stream,
    /// or in a stream that reads one on event time.
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

    /// `pipeline` with each stream operator that has a `defaultKey` inside a `partitionBy` by that
    /// key. Operators of inner chains (a `groupBy`'s, a `partitionBy`'s) stay as written.
    public static func splittingByDefault(_ pipeline: ValidatedPipeline) -> ValidatedPipeline {
        let eventTimed = onEventTime(pipeline)
        return pipeline.replacingOperators { component in
            guard let key = defaultKey(of: component, onEventTime: eventTimed.contains(component.use.location))
            else { return component }
            var use = component.use
            use.name = BuiltinComponents.partitionBy.name
            use.parameters = nil
            let chain = ParameterValues.OperatorChain(operators: [component], location: component.use.location)
            return ValidatedComponent(
                use: use, spec: BuiltinComponents.partitionBy,
                parameters: BuiltinComponents.partitionByDefault(around: chain, key: key))
        }
    }
}
