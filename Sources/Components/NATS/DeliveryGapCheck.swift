/// Whether one reader of a consumer received every delivery of it. JetStream numbers each
/// delivery of a consumer (its consumer sequence, redeliveries included), so a number skipped
/// is a delivery that went to a pull request whose answer never arrived: lost with a server or a
/// cluster node that went away, or taken by another client. Such a message comes again only
/// after ackWait, behind newer ones, and is late for the windows it belongs to; a partition's
/// reader under --state that finds a gap reads the partition again from its stored state instead.
/// A number that goes back (a new consumer leader delivering again what the old one delivered)
/// is not a gap: those copies are settled as copies.
struct DeliveryGapCheck: Equatable {
    /// The consumer sequence of the last delivery received, nil before the first.
    private(set) var last: UInt64?

    /// The first of `consumerSequences` (one batch, in the order received) that comes after
    /// deliveries that never arrived, with those deliveries' numbers; nil when none is missing.
    /// `last` follows the deliveries before it. A sequence of 0 (unreadable metadata) is skipped.
    mutating func firstAfterLostDeliveries(_ consumerSequences: [UInt64]) -> (
        index: Int, lost: ClosedRange<UInt64>
    )? {
        for (index, sequence) in consumerSequences.enumerated() where sequence > 0 {
            if let last, sequence > last + 1 { return (index, (last + 1)...(sequence - 1)) }
            last = sequence
        }
        return nil
    }
}
