import Reactive

/// A component's parameters after checking: the values the file gave, each as the Swift value its
/// type makes. Read them with their `Parameter` keys, which supply the defaults.
public struct ParameterValues {
    /// A chain of checked operators (an `ops` list inside a component).
    public struct OperatorChain {
        /// The operators, in order.
        @_spi(Host) public let operators: [ValidatedComponent]
        /// Where the list is in the file.
        public let location: SourceLocation

        /// A chain of `operators`, written at `location`.
        @_spi(Host) public init(operators: [ValidatedComponent], location: SourceLocation) {
            self.operators = operators
            self.location = location
        }
    }

    /// An inner source, checked: which source and its parameters.
    public struct InnerSource {
        /// The source's spec.
        @_spi(Components) public let spec: ComponentSpec
        /// Its checked parameters.
        @_spi(Components) public let parameters: ParameterValues
        /// Where it is in the file.
        public let location: SourceLocation
    }

    /// The given values by parameter name: `String`, `Int`, `Double`, `Bool`, `RxTimeInterval`,
    /// `Expression`, `Template`, `Value`, `StreamName`, `InnerSource`, `ParameterValues` (a nested
    /// mapping), `[Any]` (a list) or `[(String, Any)]` (a mapping with free keys).
    @_spi(Components) public var values: [String: Any]
    /// Where each given value is in the file.
    @_spi(Components) public var locations: [String: SourceLocation]
    /// Where each item of a value written as a list is in the file.
    @_spi(Components) public var itemLocations: [String: [SourceLocation]]

    /// Checked values.
    @_spi(Components) public init(
        values: [String: Any] = [:], locations: [String: SourceLocation] = [:],
        itemLocations: [String: [SourceLocation]] = [:]
    ) {
        self.values = values
        self.locations = locations
        self.itemLocations = itemLocations
    }
}
