import Reactive

/// How an operator's results depend on the elements it sees together: whether `partitionBy`
/// may split the stream under it, read from what it declares rather than from its name.
public enum Partitioning {
    /// Each element alone decides what it gives, or what it keeps is kept per partition (a
    /// watermark): split by any key, each partition gives its part of the same results.
    case anyKey
    /// Its state is kept per key (`parameter`, as written): split by a key that decides this one,
    /// the results are the same.
    case keyed(by: Expression, parameter: String)
    /// It needs every element of the stream (a total, a rate, a count of what came).
    case wholeStream
}

/// Whether the results of an operator split by its key can be put back in the order one thread
/// gives them: then it may run split over the cores and still write the same bytes.
@_spi(Components) public enum SplitOrder: Sendable, Equatable {
    /// They cannot (a result comes as elements do, at times that depend on the split).
    case never
    /// Only on event time, where results come at watermarks every partition sees alike.
    case onEventTime
    /// Always (results come at completion, in an order kept per key).
    case always
}

/// The partitions a source gives a runner group (a `nats` source with `group`): every
/// `partitionBy` after it runs these partitions.
@_spi(Components) public struct GroupPartitions: Sendable, Equatable {
    /// The group's name.
    public var group: String
    /// How many partitions the group's stream has.
    public var partitions: Int

    /// A group's partitions.
    public init(group: String, partitions: Int) {
        self.group = group
        self.partitions = partitions
    }
}

/// What a component declares about how it treats a stream, beside its parameters: what the
/// planner, lint and checkpoints read instead of deciding by its name, so a plugin's component
/// can declare the same. Each trait that depends on the values written is a function of them.
public struct ComponentTraits {
    /// How its results depend on the elements it sees together; nil: an element-wise operator
    /// takes any key, any other needs the whole stream.
    public var partitioning: ((ParameterValues) -> Partitioning)?
    /// Whether its results, split by its key, can be put back in one thread's order.
    @_spi(Components) public var splitOrder: (ParameterValues) -> SplitOrder = { _ in .never }
    /// Whether a real run splits it over the cores by its key by default (as if written inside
    /// `partitionBy`), where its split order allows.
    @_spi(Components) public var splitsByDefault = false
    /// Whether, first after `eventTime`, it takes elements as they come, each with its time,
    /// instead of in time order once the watermark reaches them.
    @_spi(Components) public var takesEventTimeAsItComes: (ParameterValues) -> Bool = { _ in false }
    /// Whether the operators after it run on event time (`eventTime`).
    @_spi(Components) public var startsEventTime = false
    /// Whether it holds every element it takes until its stream completes (`reduce`): with a
    /// source whose messages await acknowledgement, they wait as long.
    public var holdsUntilCompletion = false
    /// For a source: whether its messages wait for an acknowledgement, and stop coming when too
    /// many wait (a `nats` source reading a JetStream stream).
    @_spi(Components) public var awaitsAcknowledgement: (ParameterValues) -> Bool = { _ in false }
    /// For a source: whether its elements carry their message's origin (`Origin`), settled once
    /// all the work they caused is done (`nats`, `httpServer`, `postgres` changes). Origins are
    /// counted on the pipeline's thread only, so in a run with such a source every operator
    /// stays on it (`ComponentContext.sourcesSetOrigins`).
    @_spi(Components) public var setsOrigins: (ParameterValues) -> Bool = { _ in false }
    /// For a source: the runner group's partitions it reads, if any.
    @_spi(Components) public var groupPartitions: (ParameterValues) -> GroupPartitions? = { _ in nil }
    /// For an operator that runs its ops in partitions (`partitionBy`): how many, and the
    /// parameter that says so.
    @_spi(Components) public var partitions: ((ParameterValues) -> (count: Int, parameter: String))?
    /// Whether its expressions read beside its parameters' own (text it parses when built, such
    /// as an `aggregate`'s fields) call nothing that depends on time or order.
    @_spi(Components) public var builtExpressionsArePure: (ParameterValues) -> Bool = { _ in true }
    /// For a sink: whether it also runs for real under a test, against the test's canned HTTP
    /// answers, so that `expectRequests` sees what it sends.
    @_spi(Components) public var runsUnderTests = false

    /// For an operator that runs inner chains of operators: what one run of its chain is called
    /// (`each partition`, `each group`), as `rivulet graph` says it.
    @_spi(Components) public var innerRun = "each run"

    /// No traits beyond those of its factory.
    public init() {}

    /// Keyed by `parameter` where the file gives it; `otherwise` where it does not.
    public mutating func keyed(by parameter: Parameter<Expression?>, otherwise: Partitioning) {
        partitioning = { values in
            values[parameter].map { .keyed(by: $0, parameter: parameter.name) } ?? otherwise
        }
    }

    /// Keyed by `parameter`.
    public mutating func keyed(by parameter: Parameter<Expression>) {
        partitioning = { values in .keyed(by: values[parameter], parameter: parameter.name) }
    }
}

extension ComponentSpec {
    /// The same component with its traits changed by `declare`.
    public func declaring(_ declare: (inout ComponentTraits) -> Void) -> ComponentSpec {
        var spec = self
        declare(&spec.traits)
        return spec
    }

    /// How its results depend on the elements it sees together, for the values written.
    @_spi(Components) public func partitioning(_ values: ParameterValues) -> Partitioning {
        if let partitioning = traits.partitioning { return partitioning(values) }
        if case .elementwise = factory { return .anyKey }
        return .wholeStream
    }
}
