import Foundation
import Reactive

/// Where a new consumer starts.
enum NATSDeliverPolicy: Equatable {
    case all, new, last
    case sequence(UInt64)
    case time(Int64)

    init?(_ text: String) {
        switch text {
        case "all": self = .all
        case "new": self = .new
        case "last": self = .last
        default:
            if let sequence = UInt64(text), sequence > 0 {
                self = .sequence(sequence)
            } else if let date = ISO8601DateFormatter().date(from: text) {
                self = .time(Int64(date.timeIntervalSince1970 * 1e9))
            } else {
                return nil
            }
        }
    }
}

/// What the file asks of the consumer.
struct NATSConsumerSettings {
    var stream: String?
    var subject: String?
    var durable: String?
    var deliver: NATSDeliverPolicy
    var ackWait: RxTimeInterval
    var maxDeliver: Int
    var maxAckPending: Int
    var batch: Int
    var nakDelay: RxTimeInterval
    var deadLetter: String?
    var create: Bool
    var replicas: Int
    /// A group of runners that divide `partitions` (subjects `subject.P`) among themselves.
    var group: String? = nil
    var partitions: Int = 0
    var leaseTimeout: RxTimeInterval = .seconds(10)
    /// The partition of its group a consumer reads (its gauges carry a `partition` label).
    var partition: Int? = nil
    /// Under --state, a partition this runner took over is read in order from where its stored
    /// state ends: the consumer is made again, delivering from `restartAt` (nil: from the old
    /// consumer's acknowledgement floor, or as `deliver` says when there was none). Left to the
    /// old consumer, what a dead runner had fetched would come again only after ackWait, behind
    /// newer messages, and be late for the windows it belongs to.
    var restartsFromState = false
    var restartAt: UInt64? = nil
    /// Under --state, the consumer the partition was read through before (by its last holder):
    /// deleted once this one is made; without `restartAt`, this one starts at its floor.
    var replaces: String? = nil
    /// The name the ids derived for results carry (`CONSUMER:SEQUENCE`), when not the consumer's:
    /// a group's partition keeps `GROUP-pP` across the consumers made for it, so a result made
    /// again after a takeover has the id it had.
    var resultIDName: String? = nil
}
