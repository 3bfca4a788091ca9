/// What a checkpointed run of a pipeline keeps: each component's key, the pipeline's shape (its
/// components in order, which a checkpoint must match to be restored), and whether every
/// component can be checkpointed.
@_spi(Host) public enum CheckpointPlan {
    /// The key of a stream's source.
    public static func sourceKey(_ stream: String, _ component: String) -> String {
        "\(stream)#source \(component)"
    }

    /// The key of a stream's operator number `index` (from 0).
    public static func operatorKey(_ stream: String, _ index: Int, _ component: String) -> String {
        "\(stream)#\(index) \(component)"
    }

    /// The key of sink number `index` (from 0), which reads `stream`.
    public static func sinkKey(_ index: Int, _ stream: String, _ component: String) -> String {
        "sink#\(index) \(component) <- \(stream)"
    }

    /// The keys of every component, in the order a checkpoint's shape lists them. Changing a
    /// parameter keeps the shape, unless the component's state depends on it (`stateParameters`,
    /// recorded as written: `main#0 aggregate {every: 1m}`); adding, removing or reordering a
    /// component changes it.
    public static func shape(of pipeline: ValidatedPipeline) -> [String] {
        entries(of: pipeline).map(\.key)
    }

    /// The shape's entries, each with where its component is written.
    static func entries(of pipeline: ValidatedPipeline) -> [(key: String, location: SourceLocation)] {
        var entries: [(key: String, location: SourceLocation)] = []
        for stream in pipeline.streams {
            switch stream.origin {
            case .component(let source):
                entries.append((sourceKey(stream.name, source.spec.name) + stateText(source), source.use.location))
            case .stream(let name): entries.append(("\(stream.name)#source stream \(name)", stream.location))
            }
            for (index, component) in stream.operators.enumerated() {
                entries.append(
                    (
                        operatorKey(stream.name, index, component.spec.name) + stateText(component),
                        component.use.location
                    ))
            }
        }
        for (index, (stream, component)) in pipeline.sinks.enumerated() {
            entries.append((sinkKey(index, stream, component.spec.name) + stateText(component), component.use.location))
        }
        return entries
    }

    /// ` {name: value, ...}`: the values of the parameters the component's state depends on, as
    /// written (a default is not written, so it is left out); empty when there are none.
    static func stateText(_ component: ValidatedComponent) -> String {
        let names = component.spec.stateParameters
        guard !names.isEmpty, let written = component.use.parameters else { return "" }
        var parts: [String] = []
        for name in names {
            let node: YAMLNode?
            if written.pairs != nil {
                node = written[name]
            } else {
                // The short form (`- buffer: 1s`) writes the primary parameter alone.
                node = component.spec.primary == name ? written : nil
            }
            if let node { parts.append("\(name): \(canonical(node))") }
        }
        return parts.isEmpty ? "" : " {" + parts.joined(separator: ", ") + "}"
    }

    /// A YAML value as one line of flow text, the same however it was laid out.
    static func canonical(_ node: YAMLNode) -> String {
        switch node.kind {
        case .scalar(let text, _): return text
        case .sequence(let items): return "[" + items.map(canonical).joined(separator: ", ") + "]"
        case .mapping(let pairs):
            return "{"
                + pairs.map { "\($0.key.scalar ?? canonical($0.key)): \(canonical($0.value))" }.joined(separator: ", ")
                + "}"
        }
    }

    /// An error at every component that cannot be checkpointed.
    public static func check(_ pipeline: ValidatedPipeline) -> [Diagnostic] {
        var components: [ValidatedComponent] = []
        for stream in pipeline.streams {
            if case .component(let source) = stream.origin { components.append(source) }
            components += stream.operators
        }
        components += pipeline.sinks.map(\.component)
        let unsupported = components.compactMap { component -> Diagnostic? in
            guard case .unsupported(let why) = component.spec.checkpointing.resolved(for: component.parameters) else {
                return nil
            }
            return .error(
                "'\(component.spec.name)' cannot be checkpointed: \(why)", at: component.use.location,
                note: "run without --state, or do without '\(component.spec.name)'")
        }
        return unsupported + groupPartitionMismatches(components)
    }

    /// After a runner group's `nats` source each `partitionBy` runs the group's partitions (each
    /// message in its source partition's chain, with a watermark of its own; under `--state` its
    /// state stored with the partition), so it must have the source's partitions: what the run
    /// refuses at start, found by lint.
    static func groupPartitionMismatches(_ components: [ValidatedComponent]) -> [Diagnostic] {
        guard
            let (source, group) = components.lazy.compactMap({ component in
                component.spec.traits.groupPartitions(component.parameters).map { (component, $0) }
            }).first
        else { return [] }
        let partitions = group.partitions
        return components.compactMap { component in
            guard let (written, parameter) = component.spec.traits.partitions?(component.parameters),
                written != partitions
            else { return nil }
            return .error(
                "after the \(source.spec.name) source of group \(group.group) each partition is the group's: "
                    + "partitions must be \(partitions) (the source's), not \(written)",
                at: component.parameters.locations[parameter] ?? component.use.location,
                note: "give \(component.spec.name) \(parameter): \(partitions)")
        }
    }

    /// Whether `source` delivers messages that wait for acknowledgement (a `nats` source reading a
    /// JetStream stream: it stops fetching at `maxAckPending` unacknowledged messages).
    static func awaitsAcknowledgement(_ source: ValidatedComponent) -> Bool {
        source.spec.traits.awaitsAcknowledgement(source.parameters)
    }

    /// For a run without `--state`: a warning at every operator that holds every message of such
    /// a source until its stream completes, so the run stops fetching once the source's limit of
    /// unacknowledged messages is reached. With `--state` each checkpoint acknowledges them.
    public static func heldAcknowledgements(_ pipeline: ValidatedPipeline) -> [Diagnostic] {
        // Which streams carry such messages, through streams that read other streams.
        var carrying: Set<String> = []
        var changed = true
        while changed {
            changed = false
            for stream in pipeline.streams where !carrying.contains(stream.name) {
                let carries: Bool
                switch stream.origin {
                case .component(let source): carries = awaitsAcknowledgement(source)
                case .stream(let name): carries = carrying.contains(name)
                }
                if carries {
                    carrying.insert(stream.name)
                    changed = true
                }
            }
        }
        return pipeline.streams.filter { carrying.contains($0.name) }.flatMap { stream in
            stream.operators.filter(\.spec.traits.holdsUntilCompletion).map { component in
                Diagnostic.warning(
                    "'\(component.spec.name)' holds every message it takes unacknowledged until its stream completes: "
                        + "the nats source stops fetching at maxAckPending and the run waits",
                    at: component.use.location,
                    note:
                        "run with --state (each checkpoint acknowledges what it holds), or total per period with window or aggregate"
                )
            }
        }
    }

    /// The first difference between the shape a checkpoint was taken with and `pipeline`'s shape
    /// now, said in words, with where the component that differs is written (nil for one that
    /// was removed); nil when they are the same.
    public static func difference(saved: [String], now pipeline: ValidatedPipeline) -> (
        text: String, location: SourceLocation?
    )? {
        let entries = entries(of: pipeline)
        let now = entries.map(\.key)
        guard let text = difference(saved: saved, now: now) else { return nil }
        let index =
            zip(saved, now).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(saved.count, now.count)
        return (text, index < entries.count ? entries[index].location : nil)
    }

    /// The first difference between the shape a checkpoint was taken with and the pipeline's
    /// shape now, said in words; nil when they are the same.
    public static func difference(saved: [String], now: [String]) -> String? {
        guard saved != now else { return nil }
        for (old, new) in zip(saved, now) where old != new {
            return "'\(old)' is now '\(new)'"
        }
        if saved.count < now.count { return "'\(now[saved.count])' was added" }
        return "'\(saved[now.count])' was removed"
    }
}

extension PipelineLoader.Loaded {
    /// The same outcome with the checks of a run without `--state` added: a warning at an operator
    /// that holds a durable source's messages until its stream completes, and an error at a
    /// `partitionBy` whose partitions are not its group source's (then no pipeline).
    public func checkingAcknowledgements() -> PipelineLoader.Loaded {
        guard let pipeline else { return self }
        var components: [ValidatedComponent] = []
        for stream in pipeline.streams {
            if case .component(let source) = stream.origin { components.append(source) }
            components += stream.operators
        }
        let errors = CheckpointPlan.groupPartitionMismatches(components)
        let warnings = CheckpointPlan.heldAcknowledgements(pipeline)
        guard !warnings.isEmpty || !errors.isEmpty else { return self }
        return PipelineLoader.Loaded(
            source: source, pipeline: errors.isEmpty ? pipeline : nil,
            diagnostics: (diagnostics + errors + warnings).sorted { $0.location < $1.location },
            baseDirectory: baseDirectory)
    }

    /// The same outcome with the checkpoint check added (`run --state`, `lint --state`): an error
    /// at every component that cannot be checkpointed, and no pipeline if there is one.
    public func checkingCheckpoints() -> PipelineLoader.Loaded {
        guard let pipeline else { return self }
        let problems = CheckpointPlan.check(pipeline)
        guard !problems.isEmpty else { return self }
        return PipelineLoader.Loaded(
            source: source, pipeline: nil, diagnostics: (diagnostics + problems).sorted { $0.location < $1.location },
            baseDirectory: baseDirectory)
    }
}
