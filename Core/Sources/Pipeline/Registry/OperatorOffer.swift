/// What an operator offers the operator built right after it in the same stream, to take or
/// leave: `eventTime` offers its elements as they come (each with its time) instead of in time
/// order, which an `aggregate` right behind it takes, so nothing waits for the watermark. The
/// offering operator sets `ComponentContext.handOn` while it is built; the next one asks for the
/// kind it knows with `ComponentContext.offered(_:)` and says it took it.
@_spi(Components) public protocol OperatorOffer: AnyObject {
    /// Whether the operator after the offering one took the offer (set while that one is built).
    var isTaken: Bool { get set }
}
