/// What a source or a sink promises about the elements it carries when a run is stopped, killed
/// or started again: the delivery guarantee the component reference shows beside it.
@_spi(Components) public struct Delivery: Sendable {
    /// How often an element can arrive at the other end.
    public enum Guarantee: String, Sendable {
        /// Never twice; lost when a run dies at the wrong moment.
        case atMostOnce = "at-most-once"
        /// Never lost; possibly twice after a run died.
        case atLeastOnce = "at-least-once"
        /// Once, even across a run that died and was started again.
        case exactlyOnce = "exactly-once"
    }

    /// The guarantee.
    public var guarantee: Guarantee
    /// When it holds and what it rests on, in a sentence.
    public var detail: String

    /// A guarantee with what it rests on.
    public init(_ guarantee: Guarantee, _ detail: String) {
        self.guarantee = guarantee
        self.detail = detail
    }

    /// One line for the component reference.
    public var summary: String { "\(guarantee.rawValue): \(detail)" }
}
