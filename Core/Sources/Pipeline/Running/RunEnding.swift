/// How a run ends, for the components that settle messages: those let go while a failed or
/// stopped run is torn down were not finished, and go back to their stream.
@_spi(Components) public final class RunEnding: @unchecked Sendable {
    /// Whether the run failed or was stopped (rather than completing).
    public internal(set) var isAbandoned = false

    /// A run that has not ended.
    public init() {}
}
