/// A pipeline file as written: the configuration, before any component is built.
///
/// Both forms become the same shape: the linear form (`source`, `ops`, `sink`) is one stream
/// called `main`; the graph form names its streams.
@_spi(Host) public struct PipelineSpec {
    /// Which form the file used.
    public enum Form: Sendable {
        /// `source` / `ops` / `sink`.
        case linear
        /// `streams` / `sinks`.
        case graph
    }

    /// The path of the file.
    public var file: String
    /// The pipeline's name.
    public var name: String?
    /// What the pipeline does.
    public var description: String?
    /// Plugin libraries to load, as written (relative to the file).
    public var plugins: [(path: String, location: SourceLocation)] = []
    /// The seed of `random()`, if the file fixes one.
    public var seed: UInt64?
    /// How many workers run the stateless stretch after a JSON Lines source (`parallel:`); nil
    /// when not given, and then chosen at compile time (see `PipelineCompiler.compile`).
    public var parallel: Int?
    /// Environment variables whose values are secret whatever their names (`secrets:`).
    public var secrets: [String] = []
    /// Which form the file used.
    public var form: Form = .linear
    /// The streams, in file order.
    public var streams: [StreamSpec] = []
    /// The sinks, in file order.
    public var sinks: [SinkSpec] = []
    /// Streams declared but too broken to check further; references to them raise no second error.
    public var brokenStreams: Set<String> = []

    /// The name of the single stream of the linear form.
    public static let linearStreamName = "main"
}

/// A named component as written: `debounce: 500ms`, or `{nyt.search: {q: ...}}`.
@_spi(Host) public struct ComponentUse {
    /// The component's name.
    public var name: String
    /// Where the name is written.
    public var location: SourceLocation
    /// Its parameters as written (a scalar for the short form, a mapping, or nothing).
    public var parameters: YAMLNode?
    /// The `id` given to an operator or a sink, for naming its side streams.
    public var id: String?
    /// Where the `id` is written.
    public var idLocation: SourceLocation?
    /// `onError` written beside the component's name rather than among its parameters
    /// (`- map: {...}` then `onError: skip` on the next line), as `id` is.
    public var onError: YAMLPair? = nil
    /// Another component's name written in the same item (`sink: { file: out.csv, mode: append }`):
    /// an error, which the validator reports knowing this component's parameters.
    public var besides: YAMLPair? = nil
}

/// One stream: where its elements come from and the operators they pass through.
@_spi(Host) public struct StreamSpec {
    /// Where a stream's elements come from.
    public enum Origin {
        /// A source component.
        case component(ComponentUse)
        /// Another stream (`source: {stream: NAME}`).
        case stream(String, SourceLocation)
    }

    /// The stream's name.
    public var name: String
    /// Where the name is written.
    public var location: SourceLocation
    /// Where its elements come from.
    public var origin: Origin
    /// Its operators, in order.
    public var operators: [ComponentUse]
}

/// A sink and the stream (or side stream) it reads.
@_spi(Host) public struct SinkSpec {
    /// The stream read: a stream name, or `NAME.executing` / `NAME.errors`.
    public var stream: String
    /// Where the stream is named (or the sink, when it is implied).
    public var streamLocation: SourceLocation
    /// The sink component.
    public var component: ComponentUse
}
