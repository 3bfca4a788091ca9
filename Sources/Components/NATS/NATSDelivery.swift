import CNATS
import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// One message from a durable consumer, as the origin of what it causes: when nothing holds it
/// any more, it is acknowledged, or sent back if something failed or the run was abandoned.
/// A group runner's message names its partition's lane (`EventLanes`).
final class NATSDelivery: LanedOrigin {
    let message: OpaquePointer
    let consumer: NATSConsumer
    /// The message's stream sequence when the run keeps checkpoints (`NATSCoverage`), else 0.
    let sequence: UInt64
    var failure: String?

    init(message: OpaquePointer, consumer: NATSConsumer, sequence: UInt64 = 0, lane: EventLane? = nil) {
        self.message = message
        self.consumer = consumer
        self.sequence = sequence
        super.init(lane: lane)
    }

    /// Set once a checkpoint holding this message's effect acknowledged it.
    private var acknowledged = false
    /// How many results were published with an id derived from this message (pipeline's thread).
    private var results = 0

    /// The id a result of this message is published with when the `nats` sink names none: the
    /// consumer's name and the message's stream sequence, then `:2`, `:3`… for its second and
    /// later results. A redelivered message gives its results the same ids, so JetStream stores
    /// each once (within the output stream's duplicate window). Nil for a consumer without a name.
    func derivedMessageID() -> String? {
        guard let durable = consumer.settings.resultIDName ?? consumer.settings.durable else { return nil }
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return nil }
        let sequence = meta.pointee.Sequence.Stream
        jsMsgMetaData_Destroy(meta)
        results += 1
        return results == 1 ? "\(durable):\(sequence)" : "\(durable):\(sequence):\(results)"
    }

    override func fail(_ error: any Error) {
        if failure == nil { failure = (error as? PipelineRuntimeError)?.message ?? "\(error)" }
    }

    // The checkpoint being taken holds this message's effect: its position counts it.
    override func checkpointing() {
        if failure == nil { consumer.coverage?.cover(sequence) }
    }

    // An operator's state in a committed checkpoint holds the message: acknowledge it now, so a
    // stage that holds many (reduce, buffer) does not wait for the end of the stream.
    override func checkpointed() {
        guard !acknowledged, failure == nil, consumer.coverage?.isAbandoned != true else { return }
        acknowledged = true
        consumer.settle(message, failure: nil, sequence: sequence, checkpointed: true)
    }

    deinit {
        guard !acknowledged else { return }
        // Under --state a message done is acknowledged once a checkpoint holds what it did to
        // the operators' state (unless the run was abandoned: then it goes back at once).
        if failure == nil, let coverage = consumer.coverage, !consumer.ending.isAbandoned {
            coverage.await(message, sequence: sequence, of: consumer)
        } else {
            consumer.settle(message, failure: failure, sequence: sequence)
        }
    }
}

// A NATS message's results are published with ids derived from its consumer and sequence.
extension NATSDelivery: ResultIdentifying {
    func nextResultID() -> String? { derivedMessageID() }
}
