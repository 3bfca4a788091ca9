import Components
@_spi(Host) import Pipeline

/// A stream's `aggregate` by a key runs on every core by default in a real run, as if written
/// inside `partitionBy` by the same key: its state is split by key, so each partition's answer
/// is the whole answer for its keys. It runs as written, on one thread, where `partitionBy` would
/// use one (a source that acknowledges messages, the virtual clock), and where the run does not
/// split (`rivulet run` splits with more than one core, without `parallel: 1`, `--state` or
/// operators watched one by one, whose views show the operators as written).
@_spi(Host) public enum KeyedParallelism {
    /// How many partitions an operator split by default runs in: `partitionBy`'s default.
    public static var partitions: Int { BuiltinComponents.defaultPartitions }

    /// The key `component` is split by when it runs on every core by default: an `aggregate`'s
    /// `by`, when its expressions are pure and it routes no element errors (what may run on a
    /// partition's thread); nil for anything else.
    public static func defaultKey(of component: ValidatedComponent) -> Expression? {
        guard component.spec.name == BuiltinComponents.aggregate.name,
            let key = component.parameters.values["by"] as? Expression,
            PipelineCompiler.runsInParallel(component), BuiltinComponents.aggregateFieldsArePure(component.parameters)
        else { return nil }
        return key
    }

    /// `pipeline` with each stream operator that has a `defaultKey` inside a `partitionBy` by that
    /// key. Operators of inner chains (a `groupBy`'s, a `partitionBy`'s) stay as written.
    public static func splittingByDefault(_ pipeline: ValidatedPipeline) -> ValidatedPipeline {
        pipeline.replacingOperators { component in
            guard let key = defaultKey(of: component) else { return component }
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
