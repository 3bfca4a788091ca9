/// A component whose parameters were checked.
@_spi(Host) public struct ValidatedComponent {
    /// How it was written.
    public let use: ComponentUse
    /// What it is.
    public let spec: ComponentSpec
    /// Its checked parameters.
    public let parameters: ParameterValues
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
