/// A component whose parameters were checked.
@_spi(Host) public struct ValidatedComponent {
    /// How it was written.
    public let use: ComponentUse
    /// What it is.
    public let spec: ComponentSpec
    /// Its checked parameters.
    public let parameters: ParameterValues

    /// A checked component; the host makes one in place of one as written (a `partitionBy`
    /// around an `aggregate` that runs on every core by default).
    public init(use: ComponentUse, spec: ComponentSpec, parameters: ParameterValues) {
        self.use = use
        self.spec = spec
        self.parameters = parameters
    }
}

/// A stream whose parts were all checked.
@_spi(Host) public struct ValidatedStream {
    /// Where its elements come from: a checked source, or another stream.
    public enum Origin {
        /// A source component.
        case component(ValidatedComponent)
        /// Another stream.
        case stream(String)
    }

    /// Its name.
    public let name: String
    /// Where it is declared.
    public let location: SourceLocation
    /// Where its elements come from.
    public let origin: Origin
    /// Its operators, in order.
    public let operators: [ValidatedComponent]
    /// A stream it reads, and where the file names it.
    public struct Dependency {
        /// The stream read.
        public let name: String
        /// Where the file names it (a `stream:` source, a `merge:` list, ...).
        public let location: SourceLocation
        /// Whether it reads a side stream of an operator of `name`: its subject exists before any
        /// stream is built, so it need not be built first.
        public var isSideStream = false
        /// The reference as written (`load.elements`).
        public var reference = ""
        /// Whether only the latest element is read (`withLatestFrom`'s stream): its elements never
        /// make the reader emit.
        public var isSampled = false
    }

    /// The streams it reads (through its origin or its operators' parameters).
    public let dependencies: [Dependency]
}

/// A pipeline that passed every check, ready to be compiled.
@_spi(Host) public struct ValidatedPipeline {
    /// The configuration as written.
    public let spec: PipelineSpec
    /// The streams, each after the streams it depends on.
    public let streams: [ValidatedStream]
    /// The sinks with their checked parameters and the stream they read.
    public let sinks: [(stream: String, component: ValidatedComponent)]
    /// Side stream references (`search.executing`) → stream, operator index, side stream name.
    public let sideStreams: [String: (stream: String, operatorIndex: Int, side: String)]
    /// How many readers each stream has (sinks, other streams, operator parameters).
    public let readerCounts: [String: Int]
}

extension ValidatedPipeline {
    /// The same pipeline with each stream's operators as `transform` gives them; sources, sinks and
    /// side streams unchanged.
    @_spi(Host) public func replacingOperators(_ transform: (ValidatedComponent) -> ValidatedComponent)
        -> ValidatedPipeline
    {
        ValidatedPipeline(
            spec: spec,
            streams: streams.map { stream in
                ValidatedStream(
                    name: stream.name, location: stream.location, origin: stream.origin,
                    operators: stream.operators.map(transform),
                    dependencies: stream.dependencies)
            }, sinks: sinks, sideStreams: sideStreams, readerCounts: readerCounts)
    }
}
